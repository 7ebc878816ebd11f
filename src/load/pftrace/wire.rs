//! Walking the top-level fields of one encoded protobuf message, with the
//! byte offset of each field, without decoding nested messages. The trace
//! is read this way so that its packets are decoded one at a time, and the
//! sniffer reads a message that the head of a file may cut short.

/// The value of one field, as the wire gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1: eight bytes, little-endian.
    Fixed64(u64),
    /// Wire type 2: the field's bytes.
    Len(&'a [u8]),
    /// Wire type 5: four bytes, little-endian.
    Fixed32(u32),
}

/// Why a message's fields cannot be walked further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum WireError {
    /// The field at this offset runs past the end of the bytes.
    Truncated(usize),
    /// The field at this offset is not valid protobuf.
    Malformed(usize, &'static str),
}

/// One field: its number, its value, and the offset of its key.
pub(super) struct Field<'a> {
    /// The field number.
    pub number: u32,
    /// The value.
    pub value: Value<'a>,
    /// Offset of the field's key in the walked bytes.
    pub offset: usize,
}

/// Iterates over the fields of an encoded message; stops after the first error.
pub(super) struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    /// Walks `buf`, a whole encoded message.
    pub fn new(buf: &'a [u8]) -> Self {
        Fields {
            buf,
            pos: 0,
            failed: false,
        }
    }

    #[inline(always)]
    fn varint(&mut self, start: usize) -> Result<u64, WireError> {
        // One byte: most keys, small ids and lengths.
        if let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.varint_long(start)
    }

    fn varint_long(&mut self, start: usize) -> Result<u64, WireError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(WireError::Truncated(start));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(WireError::Malformed(start, "varint longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::Malformed(start, "varint longer than 64 bits"))
    }

    #[inline(always)]
    fn take(&mut self, n: u64, start: usize) -> Result<&'a [u8], WireError> {
        let rest = self.buf.len() - self.pos;
        // Compared before any use, so that a hostile length allocates nothing.
        if n > rest as u64 {
            return Err(WireError::Truncated(start));
        }
        let n = n as usize;
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    #[inline(always)]
    fn field(&mut self) -> Result<Field<'a>, WireError> {
        let offset = self.pos;
        let key = self.varint(offset)?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(WireError::Malformed(offset, "invalid field number"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint(offset)?),
            1 => {
                let b = self.take(8, offset)?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().unwrap_or_default()))
            }
            2 => {
                let n = self.varint(offset)?;
                Value::Len(self.take(n, offset)?)
            }
            5 => {
                let b = self.take(4, offset)?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().unwrap_or_default()))
            }
            _ => return Err(WireError::Malformed(offset, "unsupported wire type")),
        };
        Ok(Field {
            number: number as u32,
            value,
            offset,
        })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, WireError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let field = self.field();
        self.failed = field.is_err();
        Some(field)
    }
}
