"""The protobuf wire format, read and written with the Python standard
library only: what the bench scalers (`scale_xplane.py`,
`scale_pftrace.py`) share."""


def varint(buf, i):
    """The varint at buf[i:] and the index after it."""
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def encode_varint(v):
    v &= (1 << 64) - 1  # negative int64 values are ten-byte varints
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fields(buf):
    """(number, wire type, value, raw bytes of the whole field) of a message."""
    i = 0
    while i < len(buf):
        start = i
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire} not supported")
        yield number, wire, value, buf[start:i]


def field(number, wire, value):
    """One encoded field: a varint (wire 0) or length-delimited bytes (wire 2)."""
    key = encode_varint(number << 3 | wire)
    if wire == 0:
        return key + encode_varint(value)
    return key + encode_varint(len(value)) + value
