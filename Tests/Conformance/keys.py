#!/usr/bin/env python3
"""The `keys/` folder of publish-if-changed, written from Documentation/Format.md alone.

Written from "14. The keys folder" in Documentation/Format.md, without the
Swift code, as a second, independent writer of it: an entry's name, its line
and a record's content digest. `generate.py` uses it for the corpus; the tests
run it as a command to check `share-append --if-changed` against it both ways:

    keys.py entry QUEUE            the entry (name, then line) for the last record in QUEUE's pending.log
    keys.py write QUEUE KEY ID     writes KEY's entry naming ID, for the record on standard input
"""

import hashlib
import json
import os
import struct
import sys

HEADER = b"\xffSQR"


def entry_name(key):
    """An entry's name: the SHA-256 of the key's UTF-8 bytes, 64 lower-case hexadecimal digits."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def entry_line(record_id, digest):
    """An entry's bytes: one compact JSON line, `id` then `content`, and `\\n`."""
    return ('{"id":"%s","content":"%s"}\n' % (record_id, digest)).encode("utf-8")


def content_digest(kind, field, value, attachment_digests):
    """SHA-256 of: kind, `\\n`; `text`, `json` or `-`, `\\n`; the value's length, `\\n`; the
    value (no newline after it); the number of attachments, `\\n`; each one's sha256, `\\n`."""
    data = kind.encode("utf-8") + b"\n" + field.encode() + b"\n" + b"%d\n" % len(value) + value
    data += b"%d\n" % len(attachment_digests) + b"".join(d.encode() + b"\n" for d in attachment_digests)
    return hashlib.sha256(data).hexdigest()


assert content_digest("text", "text", b"hi", []) == hashlib.sha256(b"text\ntext\n2\nhi0\n").hexdigest()


def members(payload):
    """The top-level members of a stored record as (name, the value's bytes exactly as stored); a
    name that occurs twice counts with its last value. Only as strict as a well-formed record needs."""
    def space(i):
        while payload[i:i + 1] in (b" ", b"\t", b"\n", b"\r"):
            i += 1
        return i

    def string_end(i):  # i at the opening quote; returns the index after the closing one
        i += 1
        while payload[i:i + 1] != b'"':
            i += 2 if payload[i:i + 1] == b"\\" else 1
        return i + 1

    def value_end(i):
        if payload[i:i + 1] == b'"':
            return string_end(i)
        if payload[i:i + 1] in (b"{", b"["):
            depth = 0
            while True:
                c = payload[i:i + 1]
                if c == b'"':
                    i = string_end(i)
                    continue
                depth += 1 if c in (b"{", b"[") else -1 if c in (b"}", b"]") else 0
                i += 1
                if depth == 0:
                    return i
        while payload[i:i + 1] not in (b",", b"}", b" ", b"\t", b"\n", b"\r"):
            i += 1
        return i

    found = {}
    i = space(payload.index(b"{") + 1)
    while payload[i:i + 1] == b'"':
        end = string_end(i)
        name = json.loads(payload[i:end])
        start = space(space(end) + 1)  # past the colon
        stop = value_end(start)
        found[name] = payload[start:stop]
        i = space(stop)
        i = space(i + 1) if payload[i:i + 1] == b"," else i
    return found


def record_digest(payload):
    """The content digest of a stored record: its kind, its `text` or `json` as stored, its attachments."""
    fields = members(payload)
    kind = json.loads(fields["kind"])
    attachments = json.loads(fields["attachments"]) if "attachments" in fields else None
    shas = [a["sha256"] for a in attachments or []]
    if "text" in fields and fields["text"] != b"null":  # null counts as absent
        return content_digest(kind, "text", json.loads(fields["text"]).encode("utf-8"), shas)
    if "json" in fields:
        return content_digest(kind, "json", fields["json"], shas)
    return content_digest(kind, "-", b"", shas)


def records(segment):
    """The payloads of the whole frames of a segment, in order (a well-formed one: no damage)."""
    found, at = [], 0
    while at + 20 <= len(segment):
        assert segment[at:at + 4] == HEADER, "no frame at %d" % at
        (length,) = struct.unpack("<I", segment[at + 4:at + 8])
        found.append(segment[at + 12:at + 12 + length])
        at += 20 + length
    return found


def main(arguments):
    if arguments[:1] == ["entry"] and len(arguments) == 2:
        with open(os.path.join(arguments[1], "pending.log"), "rb") as f:
            last = records(f.read())[-1]
        fields = members(last)
        sys.stdout.buffer.write(entry_name(json.loads(fields["key"])).encode() + b"\n"
                                + entry_line(json.loads(fields["id"]), record_digest(last)))
    elif arguments[:1] == ["write"] and len(arguments) == 4:
        _, queue, key, record_id = arguments
        folder = os.path.join(queue, "keys")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(os.path.join(folder, entry_name(key)), "wb") as f:
            f.write(entry_line(record_id, record_digest(sys.stdin.buffer.read())))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
