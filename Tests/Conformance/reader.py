#!/usr/bin/env python3
"""A second reader of the ShareQueue queue format, written from Documentation/Format.md alone.

Given a queue directory, it predicts what one drain of the whole queue
(`host-drain --dir QUEUE`, JSON Lines on standard output) delivers and what it
sets aside, without changing anything:

    python3 Tests/Conformance/reader.py QUEUE [--coalesce] [--max-attachment-bytes N] [--batch N] [--set-aside FILE]

Standard output gets the predicted deliveries, one JSON Lines record a line,
exactly as the drain prints them (an attachment's `path` names the file in
QUEUE/attachments). With --set-aside, FILE gets one JSON object a line for
each region the drain would append to quarantine.log, with its members but
`date` and `reason`. It exits 78 when the drain would refuse the queue
(Format.md §3), printing nothing. Python 3's standard library only.
"""

import base64
import hashlib
import os
import re
import stat
import struct
import sys
import time

HEADER = b"\xffSQR"
END = b"\xffEND"
MOR = b"\xffMOR"
MAX_PAYLOAD = 16 << 20  # §5
MAX_APPEND = 16 << 20  # §5
PIECE = 1 << 20  # §6.2
MAX_ATTACHMENT = 256 << 20  # §7.3, a drain's limit by default
LARGEST_SEGMENT = 999_999_999_999_999  # §4
LARGEST_NUMBER = 999_999_999_999_999_999  # §10.2
BATCH = 5000  # §12.1, host-drain's batch size to standard output
BATCH_BYTES = 4 << 20  # §12.1


class Refused(Exception):
    """The queue is one a drain refuses to touch (§3)."""


# §5: CRC-32C, reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF.
CRC_TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# §1.2: names sort by their UTF-8 bytes.
def by_bytes(name):
    return name.encode("utf-8", "surrogatepass")


# §7.1: strict JSON. Objects are lists of (name, value) pairs, in order, repeated names kept;
# numbers are ("number", literal); strings are Python str.

class NotJSON(Exception):
    pass


class Obj(list):
    """A JSON object: its (name, value) members in order, repeated names kept."""


NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
WHITESPACE = b" \t\n\r"
ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t"}


class Parser:
    def __init__(self, data):
        self.data = data
        self.i = 0

    def skip(self):
        while self.i < len(self.data) and self.data[self.i] in WHITESPACE:
            self.i += 1

    def value(self, depth):
        self.skip()
        if self.i >= len(self.data):
            raise NotJSON("unexpected end")
        c = self.data[self.i]
        if c in (ord("{"), ord("[")) and depth > 256:
            # §7.1: objects and arrays nest at most 256 deep; a scalar is no level.
            raise NotJSON("nested too deep")
        if c == ord("{"):
            self.i += 1
            members = Obj()
            self.skip()
            if self.peek(b"}"):
                return members
            while True:
                self.skip()
                if not self.peek(b'"', consume=False):
                    raise NotJSON("expected a string key")
                name = self.string()
                self.skip()
                if not self.peek(b":"):
                    raise NotJSON("expected ':'")
                members.append((name, self.value(depth + 1)))
                self.skip()
                if self.peek(b"}"):
                    return members
                if not self.peek(b","):
                    raise NotJSON("expected ',' or '}'")
        if c == ord("["):
            self.i += 1
            elements = []
            self.skip()
            if self.peek(b"]"):
                return elements
            while True:
                elements.append(self.value(depth + 1))
                self.skip()
                if self.peek(b"]"):
                    return elements
                if not self.peek(b","):
                    raise NotJSON("expected ',' or ']'")
        if c == ord('"'):
            return self.string()
        for word, meaning in ((b"true", True), (b"false", False), (b"null", None)):
            if self.peek(word):
                return meaning
        match = NUMBER.match(self.data, self.i)
        if not match:
            raise NotJSON("not a value")
        self.i = match.end()
        return ("number", match.group().decode())

    def peek(self, token, consume=True):
        if self.data.startswith(token, self.i):
            if consume:
                self.i += len(token)
            return True
        return False

    def string(self):
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.data):
                raise NotJSON("unterminated string")
            c = self.data[self.i]
            if c == ord('"'):
                self.i += 1
                return "".join(out)
            if c < 0x20:
                raise NotJSON("control character in a string")
            if c != ord("\\"):
                start = self.i
                while self.i < len(self.data) and self.data[self.i] not in (0x22, 0x5C) and self.data[self.i] >= 0x20:
                    self.i += 1
                out.append(self.data[start:self.i].decode("utf-8"))
                continue
            escape = self.data[self.i + 1] if self.i + 1 < len(self.data) else None
            if escape in ESCAPES:
                out.append(ESCAPES[escape])
                self.i += 2
            elif escape == ord("u"):
                unit = self.hex4(self.i + 2)
                self.i += 6
                if 0xD800 <= unit < 0xDC00:
                    if not self.data.startswith(b"\\u", self.i):
                        raise NotJSON("lone surrogate")
                    low = self.hex4(self.i + 2)
                    if not 0xDC00 <= low < 0xE000:
                        raise NotJSON("lone surrogate")
                    self.i += 6
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                elif 0xDC00 <= unit < 0xE000:
                    raise NotJSON("lone surrogate")
                out.append(chr(unit))
            else:
                raise NotJSON("bad escape")

    def hex4(self, at):
        digits = self.data[at:at + 4]
        if len(digits) != 4 or not re.fullmatch(rb"[0-9a-fA-F]{4}", digits):
            raise NotJSON("bad \\u escape")
        return int(digits, 16)


def parse_record(payload):
    """The payload as a JSON object (§7.1), or None if it is not one."""
    try:
        payload.decode("utf-8")  # strict: no overlong forms, surrogates or code points above U+10FFFF
        parser = Parser(payload)
        value = parser.value(1)
        parser.skip()
        if parser.i != len(payload) or not isinstance(value, Obj):
            return None
        return value
    except (NotJSON, UnicodeDecodeError):
        return None


def last(members):
    """An object's members, one per name, with its last value (§7.1), in order of first appearance."""
    result = {}
    for name, value in members:
        result[name] = value
    return result


def is_object(value):
    return isinstance(value, Obj)


def digits_only(value):
    return isinstance(value, tuple) and re.fullmatch(r"[0-9]+", value[1]) is not None


SAFE_FILE = re.compile(r"[A-Za-z0-9.-]{1,80}")


def safe_file_name(name):
    return SAFE_FILE.fullmatch(name) is not None and not name.startswith(".") and ".." not in name


def check_record(members):
    """The record's fields (§7.1), or None when a rule is broken."""
    fields = last(members)
    v = fields.get("v")
    if not digits_only(v) or int(v[1]) < 1:
        return None
    for name in ("id", "date", "source", "kind"):
        if not isinstance(fields.get(name), str):
            return None
    if not 1 <= len(fields["id"].encode()) <= 128:
        return None
    kind = fields["kind"]
    text = fields.get("text")
    if text is not None and not isinstance(text, str):
        return None
    if kind in ("text", "url") and text is None:
        return None
    if kind == "json" and "json" not in fields:
        return None
    if fields.get("key") is not None and not isinstance(fields["key"], str):
        return None
    meta = fields.get("meta")
    if meta is not None and (not is_object(meta) or not all(isinstance(v, str) for v in last(meta).values())):
        return None
    attachments = fields.get("attachments")
    if attachments is not None:
        if not isinstance(attachments, list) or is_object(attachments):
            return None
        for entry in attachments:
            if not is_object(entry):
                return None
            e = last(entry)
            if not all(isinstance(e.get(n), str) for n in ("name", "file", "sha256", "type")) or not digits_only(e.get("size")):
                return None
            if not safe_file_name(e["file"]):
                return None
    if kind == "file" and not attachments:
        return None
    return fields


def mostly_holes(queue, entry, folder="attachments"):
    """§7.3: a regular file of `size` bytes more than half of which is holes of a sparse file."""
    path = os.path.join(queue, folder, entry["file"])
    try:
        st = os.lstat(path)
        size = int(entry["size"][1])
        if not stat.S_ISREG(st.st_mode) or st.st_size != size or size == 0:
            return False
        fd = os.open(path, os.O_RDONLY)
    except (OSError, ValueError):
        return False
    try:
        holes, offset = 0, 0
        while offset < size:
            hole = os.lseek(fd, offset, os.SEEK_HOLE)
            if hole >= size:
                return False
            try:
                data = os.lseek(fd, hole, os.SEEK_DATA)
            except OSError:
                data = size
            holes += min(data, size) - hole
            if holes > size // 2:
                return True
            offset = data
        return False
    finally:
        os.close(fd)


def attachment_ok(queue, entry):
    """§7.3: the copy is a regular file in attachments/ of `size` bytes, with that SHA-256 (other names prove nothing)."""
    return copy_holds(os.path.join(queue, "attachments", entry["file"]), entry, sparse_passes=True)


def copy_holds(path, entry, sparse_passes):
    """Whether `path` (not followed) is a regular file of the entry's `size` and `sha256`; with `sparse_passes`
    false, not one more than half holes either. Raises PermissionError where the drain may not read it."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != int(entry["size"][1]):
        return False
    if not sparse_passes and mostly_holes(os.path.dirname(os.path.dirname(path)), entry, folder=os.path.basename(os.path.dirname(path))):
        return False
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest() == entry["sha256"]


# §7.3, *Copies in a folder moved aside*.
MOVED_ASIDE = re.compile(rb"rejected-([0-9]{1,18})(?:-[0-9a-f]{16})?-attachments")
ALLOWED_LEAD_MS = 300_000  # §12.2's 5 minutes, for the names of folders moved aside too
MOVED_ASIDE_SEARCHED = 8  # of each owner


def moved_aside_folders(queue, now_ms):
    """The folders moved aside from attachments/ a drain looks in, newest first: directories named
    rejected-<ms>[-<tag>]-attachments, <ms> at most 5 minutes past the clock, the newest 8 of each owner."""
    found = []
    for name in os.listdir(os.fsencode(queue)):
        m = MOVED_ASIDE.fullmatch(name)
        if m is None or int(m.group(1)) > now_ms + ALLOWED_LEAD_MS:
            continue
        try:
            st = os.lstat(os.path.join(os.fsencode(queue), name))
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            found.append((int(m.group(1)), name, st.st_uid))
    found.sort(key=lambda f: (-f[0], f[1]))  # newest first; of equal times, by the names' bytes (§1.2)
    taken, folders = {}, []
    for _, name, owner in found:
        taken[owner] = taken.get(owner, 0) + 1
        if taken[owner] <= MOVED_ASIDE_SEARCHED:
            folders.append(os.fsdecode(name))
    return folders


def copy_state(queue, entry, folders):
    """§7.3: "ok" if the copy is in attachments/ as promised, or one of the folders moved aside holds it
    (a drain copies it back); "waits" if it is missing and a folder the drain may not read may hold it,
    or it is another user's copy the drain may not read (a dead letter that waits, §13); "bad" otherwise."""
    path = os.path.join(queue, "attachments", entry["file"])
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        return "bad"
    if st is not None:
        if stat.S_ISREG(st.st_mode) and st.st_uid != os.geteuid() and not os.access(path, os.R_OK):
            return "waits"
        return "ok" if attachment_ok(queue, entry) else "bad"
    barred = False
    for folder in folders:
        try:
            if copy_holds(os.path.join(queue, folder, entry["file"]), entry, sparse_passes=False):
                return "ok"
        except PermissionError:
            barred = True
    return "waits" if barred else "bad"


# §7.5 and §8.1: writing JSON again.

def write_string(text):
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20:
            out.append("\\u%04x" % code)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def write_value(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, str):
        return write_string(value)
    if is_object(value):
        fields = last(value)
        return "{" + ",".join(write_string(n) + ":" + write_value(fields[n]) for n in fields) + "}"
    return "[" + ",".join(write_value(v) for v in value) + "]"


KNOWN = ("v", "id", "date", "source", "kind", "text", "json", "key", "meta", "attachments")


def reencode(fields, queue):
    parts = ['"v":%d' % int(fields["v"][1])]
    for name in KNOWN[1:]:
        value = fields.get(name)
        if name not in fields or (value is None and name != "json"):
            continue
        if name == "attachments":
            entries = []
            for entry in value:
                e = last(entry)
                e = {"name": e["name"], "file": e["file"], "size": ("number", str(int(e["size"][1]))), "sha256": e["sha256"], "type": e["type"],
                     "path": os.path.join(os.path.abspath(queue), "attachments", e["file"])}
                entries.append(Obj(sorted(e.items(), key=lambda member: by_bytes(member[0]))))
            value = entries
        parts.append(write_string(name) + ":" + write_value(value))
    for name in (n for n in fields if n not in KNOWN):
        parts.append(write_string(name) + ":" + write_value(fields[name]))
    return ("{" + ",".join(parts) + "}").encode("utf-8", "surrogatepass")


# §6: reading a segment into events: ("record", offset, end, payload, continued) or ("damage", offset, bytes, torn).

def judge(data, p):
    """§6.1: ("complete", size, continued), ("incomplete",) or ("damaged",)."""
    available = len(data) - p
    if data[p:p + 4] != HEADER[:min(4, available)]:
        return ("damaged",)
    if available < 12:
        return ("incomplete",)
    length = struct.unpack_from("<I", data, p + 4)[0]
    if length > MAX_PAYLOAD:
        return ("damaged",)
    if available < 20 + length:
        return ("incomplete",)
    trailer = data[p + 12 + length:p + 20 + length]
    if struct.unpack_from("<I", trailer)[0] != length or trailer[4:] not in (END, MOR):
        return ("damaged",)
    payload = data[p + 12:p + 12 + length]
    if b"\xff" in payload or crc32c(data[p + 4:p + 8] + payload) != struct.unpack_from("<I", data, p + 8)[0]:
        return ("damaged",)
    return ("complete", 20 + length, trailer[4:] == MOR)


def read_segment(data, start):
    events = []
    damage = []  # the open damaged region: [offset, bytes, torn]
    held = []  # frames of an append whose END frame is not read yet
    held_bytes = 0

    def add_damage(offset, chunk, torn):
        nonlocal damage
        if damage and damage[2] != torn:
            flush()
        while chunk:
            if not damage:
                damage = [offset, b"", torn]
            taken = chunk[:PIECE - len(damage[1])]
            damage[1] += taken
            chunk = chunk[len(taken):]
            offset += len(taken)
            if len(damage[1]) == PIECE:
                flush()

    def flush():
        nonlocal damage
        if damage:
            events.append(("damage", damage[0], damage[1], damage[2]))
            damage = []

    def abandon(torn):
        nonlocal held, held_bytes
        flush()
        for offset, end, _, _ in held:
            add_damage(offset, data[offset:end], torn)
        held, held_bytes = [], 0

    def release():
        nonlocal held, held_bytes
        for frame in held:
            events.append(("record",) + frame)
        held, held_bytes = [], 0

    p = start
    while p < len(data):
        verdict = judge(data, p)
        if verdict[0] == "complete":
            size, continued = verdict[1], verdict[2]
            flush()
            frame = (p, p + size, data[p + 12:p + size - 8], continued)
            p += size
            if not held and not continued:
                # §6.4 limits appends of several records; an append of one is limited by §5 alone.
                events.append(("record",) + frame)
                continue
            held.append(frame)
            held_bytes += size
            if held_bytes > MAX_APPEND:
                abandon(False)
            elif not continued:
                release()
            continue
        later = data.find(HEADER, p + 1)
        if verdict[0] == "incomplete" and later == -1:
            # §6.3: a torn tail; the append it belongs to is not delivered (§6.4).
            if held:
                abandon(True)
            else:
                flush()
            add_damage(p, data[p:], True)
            p = len(data)
            break
        release()  # §6.4: damage in the middle of an append delivers its intact records
        stop = later if later != -1 else len(data)
        add_damage(p, data[p:stop], False)
        p = stop
    if held:
        abandon(True)
    flush()
    return events


# §3, §4, §10: the directory.

def written_by_a_drain(queue, st):
    """§2.5: a file only drains write that a drain may trust: the directory's owner's, root's or
    this reader's, and no one but its owner may write it."""
    owner = os.stat(queue).st_uid
    return st.st_uid in (owner, 0, os.geteuid()) and st.st_mode & 0o022 == 0


def check_format(queue):
    path = os.path.join(queue, "format")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return  # a drain creates a new queue's marker
    if not stat.S_ISREG(st.st_mode):
        raise Refused()
    if not written_by_a_drain(queue, st):
        return  # §3: any member could have written it; read as format 1
    with open(path, "rb") as f:
        lines = [line for line in f.read(256).split(b"\n") if line]
    first = lines[0] if lines else b""
    match = re.fullmatch(rb"ShareQueue queue format ([1-9][0-9]{0,8})", first)
    if not match or int(match.group(1)) > 1:
        raise Refused()


SEALED = re.compile(r"sealed-([0-9]+)\.log")


def sealed_name(n):
    return "sealed-%012d.log" % n


def list_segments(queue):
    sealed = []
    for name in os.listdir(queue):
        match = SEALED.fullmatch(name)
        if match:
            n = int(match.group(1))
            if 1 <= n <= LARGEST_SEGMENT and sealed_name(n) == name:
                sealed.append(n)
    return sorted(sealed)


def read_checkpoint(queue, sealed):
    path = os.path.join(queue, "checkpoint")
    try:
        if not written_by_a_drain(queue, os.lstat(path)):
            return (0, 0)  # §2.5, §10.1: set aside by a drain, which starts over
        with open(path, "rb") as f:
            data = f.read(128)
    except FileNotFoundError:
        return (0, 0)
    best = None
    for index in range(2):
        slot = data[index * 64:(index + 1) * 64]
        words = slot[:-1].split(b" ")
        words = [w for w in words if w]
        if len(slot) != 64 or len(words) != 4 or not all(re.fullmatch(rb"[0-9]+", w) for w in words[:3]):
            continue
        serial, segment, offset = (int(w) for w in words[:3])
        if not (1 <= serial <= LARGEST_NUMBER and segment <= LARGEST_SEGMENT and offset <= LARGEST_NUMBER):
            continue
        text = b"%d %d %d" % (serial, segment, offset)
        text += b" %x" % crc32c(text)
        if text.ljust(63) + b"\n" != slot:
            continue
        if best is None or serial > best[0]:
            best = (serial, segment, offset)
    if best is None:
        return (0, 0)
    _, segment, offset = best
    # §10.3: a position no drain can have written is the start.
    if sealed and sealed[0] < segment:
        return (0, 0)
    if segment == LARGEST_SEGMENT and (not sealed or sealed[-1] != segment):
        return (0, 0)
    return (segment, offset)


# §12.2: "newest".

DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:Z|([+-])([0-9]{2}):([0-9]{2}))")


def instant(date):
    """(seconds, fraction as a decimal string) since an epoch, or None when `date` does not parse."""
    match = DATE.fullmatch(date) if isinstance(date, str) else None
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days_in = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not (1 <= month <= 12 and 1 <= day <= days_in[month - 1] and hour <= 23 and minute <= 59 and second <= 59):
        return None
    offset = 0
    if match.group(8):
        oh, om = int(match.group(9)), int(match.group(10))
        if oh > 23 or om > 59:
            return None
        offset = (oh * 60 + om) * 60 * (1 if match.group(8) == "+" else -1)
    # Days since 0000-03-01, a proleptic Gregorian count.
    y = year - (month <= 2)
    days = 365 * y + y // 4 - y // 100 + y // 400 + (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
    fraction = (match.group(7) or "").rstrip("0")
    return (seconds, fraction.ljust(40, "0"))


# A date more than this many seconds after the moment it is read counts as one that does not parse.
LEAD = 300


def clock():
    """The reading of this machine's clock, as `instant` gives an instant."""
    ms = time.time_ns() // 1_000_000
    return (instant("1970-01-01T00:00:00Z")[0] + ms // 1000, ("%03d" % (ms % 1000)).rstrip("0").ljust(40, "0"))


def as_read(date, now):
    """The instant of `date` as "newest" counts it when read at `now`: None when it does not parse or lies ahead."""
    i = instant(date)
    return None if i is None or i > (now[0] + LEAD, now[1]) else i


def newer_or_equal(a, b, now):
    """Whether date `a` (appended later) is at least as new as `b`, both read at `now`."""
    ia, ib = as_read(a, now), as_read(b, now)
    if ia is None:
        return ib is None
    return ib is None or ia >= ib


# A drain.

def drain(queue, coalesce=False, max_attachment=MAX_ATTACHMENT, batch_size=BATCH):
    check_format(queue)
    sealed = list_segments(queue)
    segment, offset = read_checkpoint(queue, sealed)
    last_sequence = max(segment, sealed[-1] if sealed else 0)
    if os.lstat(queue).st_mode & 0o020:
        # Format.md section 4: a member may hide the checkpoint; numbered from the clock, past any it names.
        last_sequence = max(last_sequence, min(int(time.time() * 1000), LARGEST_SEGMENT // 2))
    segments = [(n, os.path.join(queue, sealed_name(n))) for n in sealed]
    pending = os.path.join(queue, "pending.log")
    try:
        st = os.lstat(pending)
        if stat.S_ISREG(st.st_mode) and st.st_size > 0 and last_sequence + 1 <= LARGEST_SEGMENT:
            segments.append((last_sequence + 1, pending))
    except FileNotFoundError:
        pass

    # Every segment's events, with each record judged (§7) and its attachments checked (§7.3).
    items = []  # (segment name, kind, offset, end, payload or bytes, extra); kind "damage" is found by reading (§6)
    folders = None  # the folders moved aside looked in, listed when a copy is first missing
    for n, path in segments:
        with open(path, "rb") as f:
            data = f.read()
        start = offset if n == segment else 0
        if start > len(data):
            start = 0
        for event in read_segment(data, start):
            if event[0] == "damage":
                items.append((sealed_name(n), "damage", event[1], event[1] + len(event[2]), event[2], event[3]))
                continue
            _, at, end, payload, _ = event
            members = parse_record(payload)
            fields = check_record(members) if members is not None else None
            if fields is not None and fields.get("attachments"):
                # §7.3: over the drain's limit, all entries counted, a dead letter, its files unread; it neither
                # supersedes nor is delivered.
                if len(fields["attachments"]) > 1000 \
                        or sum(int(last(e)["size"][1]) for e in fields["attachments"]) > max_attachment \
                        or any(safe_file_name(last(e)["file"]) and mostly_holes(queue, last(e)) for e in fields["attachments"]):
                    items.append((sealed_name(n), "dead letter", at, end, payload, None))
                    continue
                # §7.3: a copy missing from attachments/ comes back from a folder moved aside that holds it; one
                # that another user keeps from the drain makes the record a dead letter that waits (§13).
                if folders is None:
                    folders = moved_aside_folders(queue, int(time.time() * 1000))
                states = [copy_state(queue, last(e), folders) if safe_file_name(last(e)["file"]) else "bad"
                          for e in fields["attachments"]]
                if "waits" in states:
                    items.append((sealed_name(n), "dead letter", at, end, payload, None))
                    continue
                if states.count("ok") != len(states):
                    fields = None
            if fields is None:
                items.append((sealed_name(n), "set aside", at, end, data[at:end], False))
            else:
                items.append((sealed_name(n), "record", at, end, payload, fields))

    newest = {}
    if coalesce:
        now = clock()  # one reading for every record, as a drain reads them
        for item in items:
            if item[1] == "record" and isinstance(item[5].get("key"), str):
                key = item[5]["key"].encode("utf-8", "surrogatepass")
                if key not in newest or newer_or_equal(item[5]["date"], newest[key][1], now):
                    newest[key] = ((item[0], item[2]), item[5]["date"])  # known by its place, not its id

    delivered, set_aside = [], []
    # §12.1: a batch ends at the end of a segment, and after the item that brings its records to
    # deliver, or its regions of damage found by reading and its dead letters, to the batch size,
    # or the bytes read (every record's payload, 256 at least, every region's bytes) to 4 MiB.
    batch, records, damaged, read, segment_name = 0, 0, 0, 0, None
    for name, kind, at, end, payload, extra in items:
        if name != segment_name:
            batch, records, damaged, read, segment_name = batch + 1, 0, 0, 0, name
        this_batch = batch
        if kind == "damage":
            read += len(payload)
        else:
            read += max(len(payload) - (20 if kind == "set aside" else 0), 256)  # a payload, not its frame; 256 at least
        superseded = False
        if kind == "record":
            key = extra.get("key")
            superseded = isinstance(key, str) and coalesce and newest[key.encode("utf-8", "surrogatepass")][0] != (name, at)
            records += 0 if superseded else 1
        elif kind in ("damage", "dead letter"):
            damaged += 1
        if records >= batch_size or damaged >= batch_size or read >= BATCH_BYTES:
            batch, records, damaged, read = batch + 1, 0, 0, 0
        if kind in ("damage", "set aside"):
            # §11: damage that touches damage before it in the same batch joins it, up to 1 MiB, torn tails apart.
            if set_aside and set_aside[-1][0] == name and set_aside[-1][1] + len(set_aside[-1][2]) == at \
                    and set_aside[-1][3] == extra and len(set_aside[-1][2]) + len(payload) <= PIECE and set_aside[-1][4] == this_batch:
                set_aside[-1][2] += payload
            else:
                set_aside.append([name, at, payload, extra, this_batch])
            continue
        if kind == "dead letter" or superseded:
            continue
        if extra.get("attachments") or b"\n" in payload or b"\r" in payload:
            delivered.append(reencode(extra, queue))
        else:
            delivered.append(payload)
    return delivered, set_aside


def option_value(arguments, name):
    """The value after `name`, and the arguments without both."""
    if name not in arguments:
        return None, arguments
    index = arguments.index(name)
    return arguments[index + 1], arguments[:index] + arguments[index + 2:]


def main(arguments):
    coalesce = "--coalesce" in arguments
    set_aside_file, arguments = option_value(arguments, "--set-aside")
    max_attachment, arguments = option_value(arguments, "--max-attachment-bytes")
    batch_size, arguments = option_value(arguments, "--batch")
    queue = [a for a in arguments if a != "--coalesce"][0]
    try:
        delivered, set_aside = drain(queue, coalesce, int(max_attachment) if max_attachment else MAX_ATTACHMENT,
                                     int(batch_size) if batch_size else BATCH)
    except Refused:
        return 78
    sys.stdout.buffer.write(b"".join(line + b"\n" for line in delivered))
    if set_aside_file:
        with open(set_aside_file, "wb") as f:
            for name, at, data, torn, _ in set_aside:
                f.write(b'{"segment":%s,"offset":%d,"length":%d,"tornTail":%s,"keptBytes":%d,"data":"%s"}\n' % (
                    write_string(name).encode(), at, len(data), b"true" if torn else b"false", len(data), base64.b64encode(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
