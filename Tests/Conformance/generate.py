#!/usr/bin/env python3
"""Writes the input queues of the conformance corpus, byte for byte.

Written from Documentation/Format.md alone, as a second, independent writer of
the format: frames, CRC-32C, records, checkpoint slots and the format marker are
all made here, without the Swift code (and `keys/` entries by keys.py beside it).
It reads the document too: the worked examples there (the CRC check value, the
86-byte frame, the checkpoint slot) must come out of this file's own code, or it
stops, and the revision it was checked against is written to `REVISION`. Run it
from anywhere:

    python3 Tests/Conformance/generate.py

It rewrites every `<case>/queue/` and `<case>/about.txt`; the expected results
(`<case>/expected/`) come from the tests, run with SHAREQUEUE_UPDATE_CONFORMANCE=1.
"""

import hashlib
import json
import os
import re
import shutil
import struct
import sys

sys.dont_write_bytecode = True  # keep the corpus folder clean
import keys  # noqa: E402 (the keys folder's entries, also from the specification alone)

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIFICATION = os.path.join(HERE, "..", "..", "Documentation", "Format.md")
QUEUE_ID = "6F1D3C52-8E0B-4B8A-9C3E-2A4D5B6C7D8E"
DATE = "2026-11-29T14:52:20.123Z"

HEADER = b"\xffSQR"
END = b"\xffEND"
MOR = b"\xffMOR"


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, init and xorout 0xFFFFFFFF."""
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


def frame(payload, last=True):
    length = struct.pack("<I", len(payload))
    crc = struct.pack("<I", crc32c(length + payload))
    return HEADER + length + crc + payload + length + (END if last else MOR)


def batch(payloads):
    return b"".join(frame(p, last=(i == len(payloads) - 1)) for i, p in enumerate(payloads))


def uuid(n):
    return "00000000-0000-4000-8000-%012d" % n


def record(n, text=None, kind="text", **fields):
    """A record's stored JSON, in the order a producer writes the fields."""
    value = {"v": 1, "id": uuid(n), "date": DATE, "source": "conformance", "kind": kind}
    if text is not None:
        value["text"] = text
    value.update(fields)
    return compact(value)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def slot(serial, segment, offset):
    fields = "%d %d %d" % (serial, segment, offset)
    text = "%s %x" % (fields, crc32c(fields.encode()))
    return (text.ljust(63) + "\n").encode()


BLANK_SLOT = b" " * 63 + b"\n"


def checkpoint(serial, segment, offset):
    """One valid slot where a drain that wrote serials 1 to s in turn left it (slot (s - 1) % 2), the other blank."""
    slots = [BLANK_SLOT, BLANK_SLOT]
    slots[(serial - 1) % 2] = slot(serial, segment, offset)
    return slots[0] + slots[1]


def read_specification():
    """The specification's text, its revision line, and its worked examples checked against the code above."""
    with open(SPECIFICATION, encoding="utf-8") as f:
        text = f.read()
    revision = re.search(r"\*\*(Format 1, revision \d+, \d{4}-\d{2}-\d{2})\.\*\*", text)
    if not revision:
        sys.exit("generate.py: %s has no 'Format 1, revision N, date' line" % SPECIFICATION)
    check = re.search(r"the CRC of the ASCII bytes\s+`123456789` is `0x([0-9A-F]{8})`", text)
    if not check or crc32c(b"123456789") != int(check.group(1), 16):
        sys.exit("generate.py: the CRC-32C check value in %s does not match this file's CRC-32C" % SPECIFICATION)
    dump = re.findall(r"^    ([0-9a-f]{8}): ((?:[0-9a-f]{2} )+)", text, re.MULTILINE)
    example = bytes.fromhex("".join(line for _, line in dump).replace(" ", ""))
    if len(example) != 86 or frame(example[12:-8]) != example:
        sys.exit("generate.py: the example frame in %s is not what this file frames its payload as" % SPECIFICATION)
    slot_line = re.search(r"^    (1 3 157 [0-9a-f]+) +⏎$", text, re.MULTILINE)
    if not slot_line or slot(1, 3, 157).rstrip() != slot_line.group(1).encode():
        sys.exit("generate.py: the example checkpoint slot in %s is not what this file writes" % SPECIFICATION)
    return text, revision.group(1), example[12:-8]


SPEC_TEXT, SPEC_REVISION, SPEC_EXAMPLE_PAYLOAD = read_specification()


def format_marker(version=1):
    return ("ShareQueue queue format %s\nqueue %s\n" % (version, QUEUE_ID)).encode()


CASES = []


def case(name, about, files, options=()):
    """A case; `options` are the drain's arguments besides --dir, written to `options`, one a line."""
    CASES.append((name, about, files, list(options)))


def queue(segments, checkpoint_bytes=BLANK_SLOT * 2, marker=None, extra=None):
    """A complete queue: format marker, both lock files, a checkpoint, and `segments` (name to bytes)."""
    files = {
        "format": marker if marker is not None else format_marker(),
        "append.lock": b"",
        "drain.lock": b"",
        "checkpoint": checkpoint_bytes,
    }
    files.update(segments)
    files.update(extra or {})
    return files


A = record(1, "first")
B = record(2, "second")
C = record(3, "third")
D = record(4, "fourth")


def flip(data, index, mask=0x01):
    data = bytearray(data)
    data[index] ^= mask
    return bytes(data)


# Clean queues.

case("clean", "Five records, one of them a batch of two, in pending.log: all delivered in order, the segment removed.",
     queue({"pending.log": frame(A) + frame(record(2, "https://swift.org", kind="url"))
            + frame(record(3, kind="json", json={"b": [1, 2.50, "x"], "a": None}))
            + batch([record(4, "batch one"), record(5, "batch two")])}))

case("spec-example", "The 86-byte frame shown in Format.md §5 (read from the document), whose payload is the smallest kind of record: id, date and source are only checked to be strings.",
     queue({"pending.log": frame(SPEC_EXAMPLE_PAYLOAD)}))

case("empty-pending", "An empty pending.log is not sealed: nothing is delivered and the checkpoint stays at the start.",
     queue({"pending.log": b""}))

# Torn tails: a writer died mid-append.

torn_b = frame(B)
case("torn-tail-mid-header", "The file ends 7 bytes into the second record's header: a torn tail, set aside.",
     queue({"pending.log": frame(A) + torn_b[:7]}))
case("torn-tail-mid-payload", "The file ends in the middle of the second record's payload.",
     queue({"pending.log": frame(A) + torn_b[:12 + len(B) // 2]}))
case("torn-tail-mid-trailer", "The file ends 3 bytes before the end of the second record's trailer.",
     queue({"pending.log": frame(A) + torn_b[:-3]}))
case("torn-record-then-whole-record", "A record cut short, then a whole record after it (a writer died, then another appended): the cut one is damage, not a torn tail.",
     queue({"pending.log": frame(A) + torn_b[:30] + frame(C)}))

# Damage in the middle of a file.

case("checksum-mismatch", "One bit flipped in the second record's payload: that frame is set aside, the others delivered.",
     queue({"pending.log": frame(A) + flip(frame(B), 12 + 20) + frame(C)}))
bad_length = bytearray(frame(B))
bad_length[4:8] = struct.pack("<I", len(B) - 5)
case("length-field-changed", "The second record's length field is 5 less than its payload: its trailer does not match.",
     queue({"pending.log": frame(A) + bytes(bad_length) + frame(C)}))
huge = bytearray(frame(B))
huge[4:8] = struct.pack("<I", (16 << 20) + 1)
case("length-over-maximum", "The second record declares a payload of 16 MiB + 1: refused without reading that far.",
     queue({"pending.log": frame(A) + bytes(huge) + frame(C)}))
case("garbage-between-records", "Bytes that are no frame between two records.",
     queue({"pending.log": frame(A) + b"not a frame at all\n" + frame(C)}))
case("false-header-in-garbage", "Garbage holding a header magic followed by more garbage: two damaged regions.",
     queue({"pending.log": frame(A) + b"junk" + HEADER + b"\x05\x00\x00\x00more junk here" + frame(C)}))
case("trailer-magic-wrong", "The second record ends in an unknown trailer magic.",
     queue({"pending.log": frame(A) + frame(B)[:-4] + b"\xffXYZ" + frame(C)}))

# Appends of several records (batches).

case("batch-torn-at-end", "A batch of three whose last frame is cut short: none of the batch is delivered.",
     queue({"pending.log": frame(A) + batch([B, C, D])[:-10]}))
case("batch-missing-end-frame", "A batch whose frames are whole but whose END frame is missing (the file ends after a MOR frame).",
     queue({"pending.log": frame(A) + frame(B, last=False) + frame(C, last=False)}))
mid = batch([B, C, D])
c_start = len(frame(B))
case("batch-damaged-in-middle", "A batch of three whose middle frame has a bad checksum, then one more record: the batch's intact records are delivered.",
     queue({"pending.log": frame(A) + mid[:c_start] + flip(mid[c_start:c_start + len(frame(C))], 12 + 3) + mid[c_start + len(frame(C)):] + frame(record(5, "fifth"))}))

# Records that are framed well but break a record rule.

bad_records = [
    compact({"v": 1, "date": DATE, "source": "conformance", "kind": "text", "text": "no id"}),
    compact({"v": 1, "id": "", "date": DATE, "source": "conformance", "kind": "text", "text": "empty id"}),
    compact({"v": 1, "id": "x" * 129, "date": DATE, "source": "conformance", "kind": "text", "text": "id over 128 bytes"}),
    compact({"id": uuid(12), "date": DATE, "source": "conformance", "kind": "text", "text": "no v"}),
    compact({"v": "1", "id": uuid(13), "date": DATE, "source": "conformance", "kind": "text", "text": "v is a string"}),
    compact({"v": 0, "id": uuid(14), "date": DATE, "source": "conformance", "kind": "text", "text": "v is 0"}),
    compact({"v": 1.0, "id": uuid(15), "date": DATE, "source": "conformance", "kind": "text", "text": "v is 1.0"}),
    compact({"v": 1, "id": uuid(16), "source": "conformance", "kind": "text", "text": "no date"}),
    compact({"v": 1, "id": uuid(17), "date": DATE, "kind": "text", "text": "no source"}),
    compact({"v": 1, "id": uuid(18), "date": DATE, "source": "conformance", "text": "no kind"}),
    compact({"v": 1, "id": uuid(19), "date": DATE, "source": "conformance", "kind": 7, "text": "kind is a number"}),
    compact({"v": 1, "id": uuid(20), "date": DATE, "source": "conformance", "kind": "text"}),
    compact({"v": 1, "id": uuid(21), "date": DATE, "source": "conformance", "kind": "url", "text": None}),
    compact({"v": 1, "id": uuid(22), "date": DATE, "source": "conformance", "kind": "text", "text": ["a"]}),
    compact({"v": 1, "id": uuid(23), "date": DATE, "source": "conformance", "kind": "json"}),
    compact({"v": 1, "id": uuid(24), "date": DATE, "source": "conformance", "kind": "text", "text": "t", "key": 5}),
    compact({"v": 1, "id": uuid(25), "date": DATE, "source": "conformance", "kind": "text", "text": "t", "meta": {"n": 1}}),
    compact({"v": 1, "id": uuid(26), "date": DATE, "source": "conformance", "kind": "text", "text": "t", "meta": ["x"]}),
    compact({"v": 1, "id": uuid(27), "date": DATE, "source": "conformance", "kind": "file"}),
    compact({"v": 1, "id": uuid(28), "date": DATE, "source": "conformance", "kind": "file", "attachments": []}),
    compact({"v": 1, "id": uuid(29), "date": DATE, "source": "conformance", "kind": "text", "text": "t", "attachments": {"file": "x"}}),
    compact({"v": 1, "id": uuid(30), "date": DATE, "source": "conformance", "kind": "file",
             "attachments": [{"name": "a.txt", "file": "a.txt", "size": 1, "sha256": "00"}]}),
    compact({"v": 1, "id": uuid(31), "date": DATE, "source": "conformance", "kind": "file",
             "attachments": [{"name": "a.txt", "file": "a.txt", "size": -1, "sha256": "00", "type": "text/plain"}]}),
    b'{"v":1,"id":"' + uuid(32).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"trailing comma",}',
    b'["not", "an", "object"]',
    b'',
    b'{"v":1,"id":"' + uuid(33).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"bad UTF-8 \xc3\x28"}',
    b'{"v":1,"id":"' + uuid(34).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"lone surrogate \\ud800"}',
    b'{"v":1,"id":"' + uuid(35).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"x"} extra',
    b'{"v":1,"id":"' + uuid(36).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"json","json":' + b"[" * 256 + b"]" * 256 + b'}',
]
case("record-rules", "Well-framed records that each break one record rule, each followed by a good one: each is set aside, as its whole frame, with its reason.",
     queue({"pending.log": frame(A) + b"".join(frame(p) + frame(record(100 + i, "good record %d" % i)) for i, p in enumerate(bad_records)) + frame(D)}))
case("bad-records-merged", "Three bad records in a row, then garbage: one quarantine entry holding all their bytes, with the first one's reason.",
     queue({"pending.log": frame(A) + frame(bad_records[0]) + frame(bad_records[1]) + frame(b"{}") + b"garbage" + frame(D)}))

passing = [
    record(40, "unknown fields pass through", color="blue", nested={"z": 1, "a": [True, None]}),
    record(41, kind="contact", card={"name": "Ada"}),
    compact({"v": 2, "id": uuid(42), "date": DATE, "source": "conformance", "kind": "text", "text": "a newer record version", "lang": "en"}),
    compact({"v": 1, "id": uuid(43), "date": "not a date", "source": "", "kind": "text", "text": "date and source are only strings"}),
    record(44, "key, meta, null fields", key="k", meta={"b": "2", "a": "1"}, attachments=None),
    compact({"v": 1, "id": "any id up to 128 bytes", "date": DATE, "source": "conformance", "kind": "json", "json": None}),
    b'{"v":1,"id":"' + uuid(46).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","id":"' + uuid(47).encode() + b'","text":"repeated name: the last one counts"}',
    b'{"v":1,"id":"' + uuid(48).encode() + b'","json":{"b" : 1.50, "a" : [1e3]},\r\n "date":"' + DATE.encode() + b'",\n "source":"conformance","kind":"json","extra":"stored over several lines: re-encoded"}',
    b'{ "v":1, "id":"' + uuid(49).encode() + b'", "date":"' + DATE.encode() + b'", "source":"conformance", "kind":"text", "text":"spaces but one line: passed through as stored \\u00e9\\/" }',
    compact({"v": 1, "id": uuid(50), "date": DATE, "source": "conformance", "kind": "json", "json": "x" * 3,
             "json2": {"deep": [[[[1]]]]}}),
]
case("pass-through", "Records with fields, kinds and versions this reader does not know, repeated names, and odd whitespace: all delivered.",
     queue({"pending.log": b"".join(frame(p) for p in passing)}))

case("limits-that-pass", "Records at limits that still pass: a json value nested 255 deep around a number (256 with the record object: a scalar is no level, §7.1), and a version beyond 64 bits (any digits from 1 up, §7.1).",
     queue({"pending.log": frame(b'{"v":1,"id":"' + uuid(51).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"json","json":'
                                 + b"[" * 255 + b"1" + b"]" * 255 + b'}')
                           + frame(b'{"v":18446744073709551616,"id":"' + uuid(52).encode() + b'","date":"' + DATE.encode()
                                   + b'","source":"conformance","kind":"text","text":"a version beyond 64 bits"}')}))

# Segments and the checkpoint.

seg3 = frame(A) + frame(B) + frame(C)
case("checkpoint-mid-sealed-segment", "The checkpoint points at the second record of sealed segment 3: delivery resumes there, then pending.log is sealed as segment 4.",
     queue({"sealed-000000000003.log": seg3, "pending.log": frame(D)}, checkpoint_bytes=checkpoint(5, 3, len(frame(A)))))
newer = bytearray(slot(8, 3, len(frame(A)) + len(frame(B))))
newer[0:1] = b"9"  # serial 9 claimed, CRC computed for serial 8: the slot is invalid
case("checkpoint-newer-slot-damaged", "The slot with the higher serial fails its CRC: the other slot (serial 7, second record) wins.",
     queue({"sealed-000000000003.log": seg3}, checkpoint_bytes=bytes(newer) + slot(7, 3, len(frame(A)))))
case("checkpoint-both-slots-damaged", "Neither slot is valid: delivery starts again from the oldest sealed segment.",
     queue({"sealed-000000000003.log": seg3}, checkpoint_bytes=b"garbage".ljust(63) + b"\n" + b"1 3 20 0".ljust(63) + b"\n"))
case("checkpoint-higher-serial-wins", "Both slots valid: the one with the higher serial wins even in slot 0.",
     queue({"sealed-000000000003.log": seg3}, checkpoint_bytes=slot(12, 3, len(frame(A)) + len(frame(B))) + slot(11, 3, len(frame(A)))))
case("checkpoint-short-file", "A checkpoint file shorter than two slots (one valid slot, as a drain that died creating it might leave): the slot is read.",
     queue({"sealed-000000000003.log": seg3}, checkpoint_bytes=slot(1, 3, len(frame(A)))))
case("checkpoint-missing", "No checkpoint file at all: delivery from the start, and the drain creates it.",
     {k: v for k, v in queue({"sealed-000000000003.log": seg3}).items() if k != "checkpoint"})
case("checkpoint-past-end", "The checkpoint points past the end of its segment: the segment is delivered from the start.",
     queue({"sealed-000000000003.log": seg3}, checkpoint_bytes=checkpoint(2, 3, 10_000)))
case("segment-before-checkpoint", "Sealed segment 2 lies before the checkpoint's segment 3: no drain writes such a checkpoint, so it is damage, and delivery starts again from segment 2.",
     queue({"sealed-000000000002.log": frame(record(9, "already delivered")), "sealed-000000000003.log": seg3},
           checkpoint_bytes=checkpoint(4, 3, 0)))
case("sealed-segments-in-order", "Sealed segments 2 and 7 (a gap) and pending.log: delivered 2, 7, then pending sealed as 8.",
     queue({"sealed-000000000007.log": frame(C), "sealed-000000000002.log": frame(A) + frame(B), "pending.log": frame(D)}))
case("foreign-segment-names", "A 16-digit number is no segment name: moved aside unread as rejected-*; names that are not sealed-<digits>.log (a letter, no number) are left alone.",
     queue({"sealed-000000000001.log": frame(A), "sealed-1000000000000000.log": frame(B), "sealed-00000000000x.log": frame(C),
            "sealed-.log": frame(C), "pending.log": frame(D)}))

case("segment-name-spellings", "sealed-7.log, a 13-digit and a 15-digit zero-padded spelling are not the queue's names: moved aside unread, the real segment and pending.log delivered.",
     queue({"sealed-7.log": frame(A), "sealed-0000000000007.log": frame(A), "sealed-000000000000007.log": frame(A),
            "sealed-000000000001.log": frame(B), "pending.log": frame(C)}))
case("checkpoint-at-maximum", "A checkpoint at the largest segment number, with no such segment: damage, delivery from the start; pending.log is sealed as segment 1.",
     queue({"pending.log": frame(A) + frame(B) + frame(C)}, checkpoint_bytes=slot(5, 999999999999999, 0) + slot(4, 0, 0)))

# The format marker.

case("newer-format", "A format marker with version 2: refused with exit 78, nothing read, written or removed.",
     queue({"pending.log": frame(A)}, marker=format_marker(2)))
case("unrecognised-format", "A format marker ShareQueue did not write: refused with exit 78, untouched.",
     queue({"pending.log": frame(A)}, marker=b"Some other queue format 1\n"))
case("format-zero", "A format marker with version 0: no version ever written, so refused with exit 78, untouched.",
     queue({"pending.log": frame(A)}, marker=format_marker(0)))
case("format-without-identifier", "A marker with the version line only (no queue line): the queue is read.",
     queue({"pending.log": frame(A)}, marker=b"ShareQueue queue format 1\n"))

# Attachments.

note = b"a small attached note\n"
note_file = "7A1C2E3F-0000-4000-8000-000000000001.txt"
attached = {"name": "note.txt", "file": note_file, "size": len(note), "sha256": hashlib.sha256(note).hexdigest(), "type": "text/plain"}
case("attachment-file-record", "A file record whose attachment is in the queue and matches: delivered with the copy's absolute path added.",
     queue({"pending.log": frame(record(60, kind="file", attachments=[attached])) + frame(record(61, "with a note", attachments=[attached]))},
           extra={"attachments/" + note_file: note}))
wrong = dict(attached, sha256="0" * 64)
missing = dict(attached, file="7A1C2E3F-0000-4000-8000-000000000099.txt")
unsafe = dict(attached, file="../format")
bigger = dict(attached, size=len(note) + 1)
case("attachment-problems", "Attachments that do not match their record (digest, size), are missing, or are named outside the queue: each record set aside.",
     queue({"pending.log": frame(A) + frame(record(62, kind="file", attachments=[wrong])) + frame(record(63, kind="file", attachments=[bigger]))
            + frame(record(64, kind="file", attachments=[missing])) + frame(record(65, kind="file", attachments=[unsafe])) + frame(D)},
           extra={"attachments/" + note_file: note}))
aside_files = ["7A1C2E3F-0000-4000-8000-0000000000%02d.txt" % n for n in (11, 12, 13, 14)]
aside = [dict(attached, file=name) for name in aside_files]
case("attachment-in-folder-moved-aside", "Format.md 7.3: copies missing from attachments/ are looked for in the folders moved aside from it, newest first: "
     "a copy found with its record's bytes is copied back and its record delivered, an older folder's copy is used when a newer one holds other bytes, "
     "and one in a folder named more than 5 minutes ahead of the clock, or under another name, is missing: its record is set aside.",
     queue({"pending.log": frame(A) + b"".join(frame(record(150 + n, kind="file", attachments=[aside[n]])) for n in range(4)) + frame(D)},
           extra={"rejected-1700000000000-attachments/" + aside_files[0]: note,
                  "rejected-1700000000000-attachments/" + aside_files[1]: note,
                  "rejected-1700000000001-00000000000000aa-attachments/" + aside_files[1]: b"other bytes\n",
                  "rejected-999999999999999999-attachments/" + aside_files[2]: note,
                  "rejected-1700000000000-keys/" + aside_files[3]: note}))
small = b"tiny\n"
small_file = "7A1C2E3F-0000-4000-8000-000000000002.txt"
within = dict(attached, file=small_file, size=len(small), sha256=hashlib.sha256(small).hexdigest())
case("attachment-over-the-limit", "Drained with --max-attachment-bytes 16: records whose attachments add up to more than 16 bytes, each entry counted, become dead letters unread, even one whose copy is missing or has another digest (7.3); a record within the limit is delivered.",
     queue({"pending.log": frame(A) + frame(record(66, kind="file", attachments=[attached])) + frame(record(67, kind="file", attachments=[wrong]))
            + frame(record(68, kind="file", attachments=[within, missing])) + frame(record(69, kind="file", attachments=[within]))
            + frame(record(70, kind="file", attachments=[within] * 4)) + frame(record(71, kind="file", attachments=[within] * 3)) + frame(D)},
           extra={"attachments/" + note_file: note, "attachments/" + small_file: small}), options=["--max-attachment-bytes", "16"])

huge = dict(attached, size=99999999999999999999)
negative_zero = record(73, kind="file", attachments=[dict(attached, size=12345678)]).replace(b'"size":12345678', b'"size":-0')
case("attachment-sizes", "An attachment's size is any number of digits (7.3): one of 20 digits, past 2^63 - 1, is over every drain's limit, so its record becomes a dead letter unread; -0 is not digits only, so its record is set aside.",
     queue({"pending.log": frame(A) + frame(record(72, kind="file", attachments=[huge])) + frame(negative_zero) + frame(D)},
           extra={"attachments/" + note_file: note}))

# Records of a content kind of the producer's own (a typed value's), the value in `json`.

reading = (b'{"v":1,"id":"' + uuid(70).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"com.example.reading",'
           b'"json":{"serial":12345678901234567890,"price":1.50,"exp":-0.0e-7,"label":"nul \\u0000 tab \\t e \\u00e9 slash \\/"}}')
reading_key = (b'{"v":1,"id":"' + uuid(71).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"link",'
               b'"json":[1.50,"\\u0000",{"b":null,"a":true}],"key":"wallpaper"}')
reading_spaced = (b'{"v":1,"id":"' + uuid(72).encode() + b'",\n"date":"' + DATE.encode() + b'","source":"conformance","kind":"com.example.reading",\n'
                  b'"json":{"z":12345678901234567890, "a":1.50,"s":"nul \\u0000 e \\u00e9 \\ud83d\\ude00 slash \\/"}}')
case("custom-kind-json", "Records of kinds of the producer's own with their values in json (long and decimal number literals, escapes such as \\u0000): delivered byte for byte, and one stored over several lines re-encoded with its literals kept.",
     queue({"pending.log": frame(reading) + frame(reading_key) + frame(reading_spaced)}))

# Names are their UTF-8 bytes: canonically equivalent names (composed and decomposed é,
# a Hangul syllable and its jamo, two combining marks in either order) are different names.

E_COMPOSED, E_DECOMPOSED = "\u00e9", "e\u0301"
HANGUL, JAMO = "\ud55c", "\u1112\u1161\u11ab"
MARKS_AB, MARKS_BA = "a\u0301\u0323", "a\u0323\u0301"
names_one_line = record(90, kind="json", json={E_DECOMPOSED: 6, E_COMPOSED: 1, JAMO: 2, HANGUL: 3, MARKS_BA: 4, MARKS_AB: 5},
                        meta={E_DECOMPOSED: "6", E_COMPOSED: "1"})
names_spread = ('{"v":1,"id":"' + uuid(91) + '","date":"' + DATE + '","source":"conformance","kind":"json",\n'
                '"json":{"' + E_DECOMPOSED + '":6,"' + E_COMPOSED + '":1,"z":{"' + MARKS_BA + '":[1],"' + MARKS_AB + '":[2]},"d":1,"d":2},\n'
                '"meta":{"' + JAMO + '":"jamo","' + HANGUL + '":"syllable"},"x' + E_DECOMPOSED + '":1,"x' + E_COMPOSED + '":2}').encode("utf-8")
case("equivalent-names", "Member names that Swift, NFC or NFD would call equal but whose UTF-8 bytes differ, in json, meta and unknown members: each is a member of its own. On one line the record is delivered byte for byte; stored over several lines it is re-encoded with every member in its order and exact name, and a repeated name (d) kept once, where it first occurred, with its last value.",
     queue({"pending.log": frame(names_one_line) + frame(names_spread)}))

same_id_old = compact({"v": 1, "id": uuid(85), "date": DATE, "source": "conformance", "kind": "text", "text": "old", "key": "shared-id"})
same_id_new = compact({"v": 1, "id": uuid(85), "date": DATE, "source": "conformance", "kind": "text", "text": "new", "key": "shared-id"})
case("coalesce-same-id", "Drained with --coalesce: two records of one key with one id, of the same date; the newest is known by its place, not its id, so the one appended last is delivered and the other superseded (12.2).",
     queue({"pending.log": frame(same_id_old) + frame(same_id_new)}), options=["--coalesce"])

# The keys folder of publish-if-changed: a drain neither reads nor changes it.

wallpaper_1 = record(80, "beach.jpg", key="wallpaper")
wallpaper_2 = record(81, kind="link", json={"url": "https://example.com/b"}, key="wallpaper")
case("keys-folder-kept", "A keys folder with an entry written by Format.md's rules, a damaged entry and a leftover temporary file: the records are delivered and keys/ is left exactly as it was.",
     queue({"pending.log": frame(wallpaper_1) + frame(wallpaper_2)},
           extra={"keys/" + keys.entry_name("wallpaper"): keys.entry_line(uuid(81), keys.record_digest(wallpaper_2)),
                  "keys/" + keys.entry_name("widget"): b"not an entry\n",
                  "keys/.tmp-4242": keys.entry_line(uuid(80), keys.record_digest(wallpaper_1))}))
case("keys-not-a-directory", "A keys that is a plain file: the records are delivered and the file is moved aside unread as rejected-<ms>-keys.",
     queue({"pending.log": frame(wallpaper_1)}, extra={"keys": b"not a folder\n"}))

# Which record of a key is newest, for --coalesce (and the store's latest): the instant
# each date denotes, then the record appended last. Of each pair the newer comes first.


def dated(n, text, key, date):
    return compact({"v": 1, "id": uuid(n), "date": date, "source": "conformance", "kind": "text", "text": text, "key": key})


newest_pairs = [
    ("offset", "2026-11-29T09:00:00.000Z", "2026-11-29T10:00:00.000+02:00"),
    ("negative-offset", "2026-11-29T10:00:00.000-05:30", "2026-11-29T15:29:59.999999Z"),
    ("unparsed", "2026-11-29T09:00:00.000Z", "not a date"),
    ("fraction-digits", "2026-11-29T10:00:00.0001Z", "2026-11-29T10:00:00.000Z"),
    ("past-18-digits", "2026-11-29T10:00:00.10000000000000000001Z", "2026-11-29T10:00:00.1Z"),
    ("invalid-day", "2026-11-29T10:00:00Z", "2026-02-30T23:00:00Z"),
]
newest_records = []
for i, (key, newer, older) in enumerate(newest_pairs):
    newest_records += [dated(90 + 2 * i, "newer: " + newer, key, newer), dated(91 + 2 * i, "older: " + older, key, older)]
newest_records.append(record(89, "no key: always delivered"))
# Equal instants, and two dates that do not parse: the one appended last wins.
newest_records += [dated(110, "tie, appended first", "tie", "2026-11-29T10:00:00Z"),
                   dated(111, "tie, appended last", "tie", "2026-11-29T12:00:00.000+02:00"),
                   dated(112, "unparsed, appended first", "both-unparsed", "soon"),
                   dated(113, "unparsed, appended last", "both-unparsed", "later")]
case("coalesce-newest-instant", "With --coalesce, the newest record of each key is the one whose date denotes the latest instant (offsets applied, fractions of any length compared exactly, a date that does not parse older than every one that does), and of equal instants the one appended last: only those are delivered, the others cleared.",
     queue({"pending.log": b"".join(frame(p) for p in newest_records)}), options=["--coalesce"])


# Rules of Format.md that are about bytes, one case each (the section in the name's about text).

spread = lambda pairs: b"{" + b",\n".join(b'"%s":%s' % (k, v) for k, v in pairs) + b"}"
sorted_names = [b"z", b"Z", b"\xc3\xa9", b"\xef\xbd\xa1", b"\xf0\x9f\x98\x80", b"a", b"aa", b"\\u0041b"]
case("names-kept-in-order", "Format.md 1.2 and 8.1: a record stored over several lines is re-encoded with unknown members and object members in their stored order, names exactly as stored (an escaped name by its decoded bytes).",
     queue({"pending.log": frame(spread([(b"v", b"1"), (b"id", b'"' + uuid(90).encode() + b'"'), (b"date", b'"' + DATE.encode() + b'"'),
                                         (b"source", b'"conformance"'), (b"kind", b'"json"'),
                                         (b"json", b"{" + b",".join(b'"%s":%d' % (n, i) for i, n in enumerate(sorted_names)) + b"}")]
                                        + [(n, b'"%d"' % i) for i, n in enumerate(sorted_names) if n not in (b"a", b"z")]))}))

escapes = (b'{"v":1,"id":"' + uuid(91).encode() + b'",\n"date":"' + DATE.encode() + b'","source":"conformance","kind":"json",'
           b'"json":["\\u001F \\u001f \\u007F \x7f \\u00E9 \\u00e9 \\/ \\b \\f \\u000B"],"text":"tab\\tcr\\rlf\\nnul\\u0000"}')
case("escapes-lower-case-hex", "Format.md 7.5 and 8.1: re-encoded strings escape only what JSON requires, other control bytes as \\u00 and lower-case hex; 7F and non-ASCII as their bytes; a one-line record keeps its own escapes.",
     queue({"pending.log": frame(escapes) + frame(record(92, "kept as stored", json=None).replace(b'"json":null', b'"x":"\\u001F\\u00E9"'))}))

cr_only = b'{"v":1,"id":"' + uuid(93).encode() + b'",\r"date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"only a CR between tokens","b":1,"a":2}'
cr_escaped = b'{"v":1,"id":"' + uuid(94).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"an escaped \\r is no line break","b":1,"a":2}'
case("carriage-return-only", "Format.md 8.1: a payload whose only line break is a CR byte counts as stored over several lines and is re-encoded; an escaped \\r inside a string is not a line break.",
     queue({"pending.log": frame(cr_only) + frame(cr_escaped)}))

over = struct.pack("<I", (16 << 20) + 1)
case("short-header-declaring-too-much", "Format.md 6.1 steps 2 and 3: 10 bytes of header at the end of the file are incomplete whatever length they declare, so a torn tail.",
     queue({"pending.log": frame(A) + HEADER + over + b"\x00\x00"}))
case("whole-header-declaring-too-much", "Format.md 6.1 steps 2 and 3: 13 bytes at the end of the file whose header declares more than 16 MiB are damage, not a torn tail.",
     queue({"pending.log": frame(A) + HEADER + over + b"\x00\x00\x00\x00\x7b"}))

case("partial-magic-at-end", "Format.md 6.1 step 1: 3 bytes at the end that begin the header magic are a torn tail.",
     queue({"pending.log": frame(A) + frame(B) + HEADER[:3]}))
case("partial-non-magic-at-end", "Format.md 6.1 step 1 and 6.2: 3 bytes at the end that do not begin the magic are damage; a partial magic at the end of garbage belongs to the garbage.",
     queue({"sealed-000000000001.log": frame(A) + b"\xff\x53\x00", "pending.log": frame(B) + b"junk" + HEADER[:2]}))

# Format.md 6.2: only a whole header magic ends damage, however much damage comes before 1 to 3 bytes of one.
for length, name in ((8, "short"), (9, "long")):
    case("partial-magic-after-%s-damage" % name, "Format.md 6.1 step 1 and 6.2: %d bytes of damage, then 1, 2 or 3 bytes that begin the header magic at the end of a segment (FF, FF 53, FF 53 51): each is one region of damage, up to the end of the file, not a torn tail%s." % (length, "; so are 100 bytes of damage before FF 53 51" if name == "long" else ""),
         queue({"sealed-000000000001.log": frame(A) + b"J" * length + HEADER[:1],
                "sealed-000000000002.log": frame(B) + b"J" * length + HEADER[:2],
                "sealed-000000000003.log": frame(C) + b"J" * length + HEADER[:3],
                "pending.log": frame(D) + (b"J" * 100 + HEADER[:3] if name == "long" else b"")}))
case("header-only-declaring-too-much", "Format.md 6.1 step 3: a whole header (12 bytes, nothing after it) at the end of the file declaring more than 16 MiB is damage, not a torn tail.",
     queue({"pending.log": frame(A) + HEADER + over + b"\x00\x00\x00\x00"}))

case("checkpoint-in-largest-segment", "Format.md 4 and 10.3: a checkpoint inside the segment with the largest number, which exists, is a position a drain can write: delivery resumes there, and pending.log stays, since no number is left to seal it as.",
     queue({"sealed-999999999999999.log": frame(A) + frame(B) + frame(C), "pending.log": frame(D)},
           checkpoint_bytes=checkpoint(3, 999999999999999, len(frame(A)))))

named = lambda file: dict(attached, file=file)
lower_note = "7a1c2e3f-0000-4000-8000-000000000002.txt"
bare_note = "7A1C2E3F-0000-4000-8000-000000000003"
case("attachment-names", "Format.md 7.3: a copy named with a lower-case UUID or without an extension is a name the queue makes; a dot file, a non-ASCII name and an 81-byte name are not, and their records are set aside.",
     queue({"pending.log": frame(record(95, kind="file", attachments=[named(lower_note)])) + frame(record(96, kind="file", attachments=[named(bare_note)]))
            + frame(record(97, kind="file", attachments=[named(".hidden")])) + frame(record(98, kind="file", attachments=[named("\u00e9.txt")]))
            + frame(record(99, kind="file", attachments=[named("A" * 77 + ".txt")])) + frame(D)},
           extra={"attachments/" + lower_note: note, "attachments/" + bare_note: note, "attachments/.hidden": note,
                  "attachments/\u00e9.txt": note, "attachments/" + "A" * 77 + ".txt": note}))

# Names compared as bytes, and "newest" as instants (Format.md 1.2 and 12.2).

equivalent = spread([(b"v", b"1"), (b"id", b'"' + uuid(100).encode() + b'"'), (b"date", b'"' + DATE.encode() + b'"'),
                     (b"source", b'"conformance"'), (b"kind", b'"json"'),
                     (b"json", b'{"e\\u0301":6,"\\u00e9":1,"\xed\x95\x9c":"syllable","\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab":"jamo",'
                               b'"a\xcc\x81\xcc\xa3":"acute first","a\xcc\xa3\xcc\x81":"dot first"}'),
                     (b"e\xcc\x81", b'"decomposed"'), (b"\xc3\xa9", b'"composed"')])
case("names-equivalent-kept-apart", "Format.md 1.2: canonically equivalent names (composed and decomposed, a Hangul syllable and its jamo, combining marks in two orders) are different names, all kept when the record is re-encoded, sorted by bytes.",
     queue({"pending.log": frame(equivalent)}))


# What a drain prints (Format.md 7.1, 7.3, 8.1): escaped names, empty and null members, and attachment entries.

escaped_names = (b'{"v":1,"id":"' + uuid(130).encode() + b'",\n"date":"' + DATE.encode() + b'","source":"conformance","kind":"json",'
                 b'"json":{"\\u0061":1,"b":{"\\u0063":[{"\\u00e9":2}]}},"\\u0078":1,"\\u00e9":3,"x":2}')
escaped_known = b'{"v":1,"id":"' + uuid(131).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","\\u0074ext":"a known name escaped","\\u0061":1}'
case("escaped-names", "Format.md 1.2 and 8.1: a member name is its decoded bytes, so an escaped known name is that member; re-encoded, every name is written with the escapes of 7.5 (\\u0061 becomes a), and a name that occurs escaped and plain is one name, where it first occurred, with its last value; a one-line record keeps its escapes.",
     queue({"pending.log": frame(escaped_names) + frame(escaped_known)}))

one_line = lambda n, rest: b'{"v":1,"id":"' + uuid(n).encode() + b'","date":"' + DATE.encode() + b'","source":"conformance","kind":"text","text":"t"' + rest + b'}'
case("empty-attachments", "Format.md 8.1: \"attachments\":[] is no attachments, as null is: a one-line record with either is printed as stored; one over several lines is re-encoded with its [] (a value, not null); a file record with [] is set aside (7.1).",
     queue({"pending.log": frame(one_line(132, b' , "attachments" : [ ] , "x" : 1.50')) + frame(one_line(133, b' , "attachments" : null , "x" : 1.50'))
            + frame(one_line(134, b',\n"attachments":[],"x":1.50'))
            + frame(compact({"v": 1, "id": uuid(135), "date": DATE, "source": "conformance", "kind": "file", "attachments": []})) + frame(D)}))

case("null-members", "Format.md 7.1 and 8.1: null counts as absent for meta, key and text (a json value null is a value), not for meta's members, which must be strings; an unknown member whose value is null is kept, as stored on one line and re-encoded over several, where the known members that are null are left out.",
     queue({"pending.log": frame(one_line(136, b', "meta" : null, "key" : null, "z" : null'))
            + frame(one_line(137, b',"meta":{"a":null}'))
            + frame(b'{"v":1,"id":"' + uuid(138).encode() + b'",\n"date":"' + DATE.encode() + b'","source":"conformance","kind":"json","json":null,"text":null,"key":null,"meta":null,"attachments":null,"z":null,"y":[null]}')
            + frame(D)}))

odd_paths = [dict(attached, path=5), dict(attached, path={"x": "/elsewhere"}), dict(attached, path=None), dict(attached, path="/elsewhere")]
upper_digest = dict(attached, sha256=attached["sha256"].upper())
short_digest = dict(attached, sha256="00")
case("attachment-path-and-digest", "Format.md 7.3: a stored path, whatever its value (a number, an object, null, a string), is ignored and replaced by the drain's; a sha256 that is not 64 lower-case hexadecimal digits (the right digest in upper case, or 00) breaks no record rule but matches no file, so its record is set aside.",
     queue({"pending.log": b"".join(frame(record(140 + i, kind="file", attachments=[entry])) for i, entry in enumerate(odd_paths))
            + frame(record(145, kind="file", attachments=[upper_digest])) + frame(record(146, kind="file", attachments=[short_digest])) + frame(D)},
           extra={"attachments/" + note_file: note}))

bad_rule = lambda n: frame(compact({"v": 1, "id": uuid(n), "date": DATE, "source": "conformance", "kind": "text"}))
case("quarantine-joined-within-batch", "Format.md 11 and 12.1, drained with --batch 2: damage that touches is joined into one entry only within a batch; a batch ends at 2 regions of damage found by reading (records set aside for a rule do not count), so four bad records with garbage between become two entries.",
     queue({"pending.log": frame(A) + bad_rule(150) + b"junk one" + bad_rule(151) + b"junk two" + bad_rule(152) + b"junk three" + bad_rule(153) + frame(D)}),
     options=["--batch", "2"])
case("empty-records-count-256-bytes", "Format.md 12.1: towards a batch's 4 MiB every record counts 256 bytes at least, one set aside too, so 16,385 empty records (well-checksummed frames with no payload) are two batches, set aside as two entries: the first 16,384 joined, then the last.",
     queue({"pending.log": frame(b"") * 16385 + frame(D)}))


def keyed(n, key, date, text):
    return compact({"v": 1, "id": uuid(n), "date": date, "source": "conformance", "kind": "text", "text": text, "key": key})


case("coalesce-newest-instant-keys", "Format.md 12.2, drained with --coalesce: dates compare as instants (offsets applied, any number of fraction digits), a date that does not parse (second 60, a lower-case t or z) is older than any that does, equal instants go to the last appended, and keys compare as bytes.",
     queue({"pending.log": b"".join(frame(p) for p in [
         keyed(110, "offset", "2026-11-29T09:00:00.000Z", "newest: 09:00 UTC"),
         keyed(111, "offset", "2026-11-29T10:00:00.000+02:00", "older: 08:00 UTC"),
         keyed(112, "unparsed", "2026-11-29T09:00:00.000Z", "newest: a date"),
         keyed(113, "unparsed", "not a date", "older: no date"),
         keyed(114, "digits", "2026-11-29T10:00:00.0001Z", "newest: 100 microseconds later"),
         keyed(115, "digits", "2026-11-29T10:00:00.000Z", "older"),
         keyed(116, "tie", "2026-11-29T10:00:00.5Z", "older: the same instant, appended first"),
         keyed(117, "tie", "2026-11-29T10:00:00.500Z", "newest: appended last"),
         keyed(118, "both unparsed", "zzz", "older: neither parses, appended first"),
         keyed(119, "both unparsed", "aaa", "newest: appended last"),
         keyed(120, "e\u0301", "2026-11-29T10:00:00.000Z", "a key of its own: decomposed"),
         keyed(121, "\u00e9", "2026-11-29T09:00:00.000Z", "a key of its own: composed"),
         keyed(122, "leap second", "2016-12-31T23:59:59.000Z", "newest: second 59 parses"),
         keyed(123, "leap second", "2016-12-31T23:59:60.000Z", "older: second 60 does not parse"),
         keyed(124, "lower case", "2026-11-29T09:00:00.000Z", "newest: upper-case T and Z"),
         keyed(125, "lower case", "2026-11-29t10:00:00.000z", "older: lower-case t and z do not parse"),
         keyed(126, "year 0", "0000-03-01T00:00:00.000Z", "older: the year 0 parses"),
         keyed(127, "year 0", "0000-03-01T00:00:00.0000000000000000000001Z", "newest: 22 fraction digits, all compared"),
     ])}), options=["--coalesce"])

case("coalesce-future-date", "Format.md 12.2, drained with --coalesce: a date more than 5 minutes after the moment the drain reads it counts as a date that does not parse, so a record dated 9999 is older than the key's next record with a date that counts, and of two such, the one appended last is newest.",
     queue({"pending.log": b"".join(frame(p) for p in [
         keyed(130, "wallpaper", "9999-12-31T23:59:59.999Z", "older: dated in the future"),
         keyed(131, "wallpaper", DATE, "newest: dated before the drain"),
         keyed(132, "ahead", "9999-12-31T00:00:00.000Z", "older: from the future, so no date, appended first"),
         keyed(133, "ahead", "not a date", "newest: no date either, appended last"),
     ])}), options=["--coalesce"])


def main():
    for name, about, files, options in CASES:
        folder = os.path.join(HERE, name, "queue")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for path, data in files.items():
            target = os.path.join(folder, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        with open(os.path.join(HERE, name, "about.txt"), "w") as f:
            f.write(about + "\n")
        options_file = os.path.join(HERE, name, "options")
        if options:
            with open(options_file, "w") as f:
                f.write("".join(option + "\n" for option in options))
        elif os.path.exists(options_file):
            os.remove(options_file)
    with open(os.path.join(HERE, "REVISION"), "w") as f:
        f.write(SPEC_REVISION + "\n")
    print("wrote %d cases, from %s" % (len(CASES), SPEC_REVISION))


if __name__ == "__main__":
    main()
