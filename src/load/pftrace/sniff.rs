//! Telling a Perfetto trace from an XPlane by its first bytes. Both are a
//! repeated message in field 1 (tag 0x0a), so the first nested message is
//! read: an XPlane has only fields 1 (varint id) and 2..=6 (length-delimited
//! name, lines, metadata maps, stats), while a TracePacket nearly always
//! carries fields beyond 6 (sequence id 10, timestamp 8, ...) or a varint in
//! 2..=6 (such as `trusted_uid` 3).

use super::wire::{Fields, Value, WireError};

/// Whether `head` (the first unpacked bytes of a file, maybe only a few
/// KiB) looks like a Perfetto trace rather than an XPlane: the first nested
/// message has a field an XPlane cannot have.
pub fn sniff(head: &[u8]) -> bool {
    let Some(first) = first_message(head) else {
        return false;
    };
    let mut perfetto = false;
    for field in Fields::new(first) {
        match field {
            Ok(f) => {
                let xplane_like = match f.value {
                    Value::Varint(_) => f.number == 1,
                    Value::Len(_) => (2..=6).contains(&f.number),
                    Value::Fixed32(_) | Value::Fixed64(_) => false,
                };
                perfetto |= !xplane_like;
            }
            // The head may cut the message short: judge on what was read.
            Err(WireError::Truncated(_)) => break,
            Err(WireError::Malformed(..)) => return false,
        }
    }
    perfetto
}

/// The bytes of the first field-1 message of `head`, cut at the end of `head`.
fn first_message(head: &[u8]) -> Option<&[u8]> {
    let (&tag, rest) = head.split_first()?;
    if tag != 0x0a {
        return None;
    }
    let mut len = 0u64;
    for (i, &b) in rest.iter().enumerate().take(10) {
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let body = &rest[i + 1..];
            let n = usize::try_from(len).unwrap_or(usize::MAX).min(body.len());
            return (n > 0).then(|| &body[..n]);
        }
    }
    None
}
