//! Finding the end of a JSON container fast: 64 bytes at a time, with
//! bitmasks of quotes and brackets (SSE2 on x86_64, word tricks elsewhere)
//! instead of one byte at a time.
//!
//! Inside strings, brackets do not count; a string's extent comes from the
//! prefix XOR of its quote bits. Blocks holding a backslash (rare in
//! traces) and the last bytes of a buffer go byte by byte, so escapes are
//! always read exactly.

/// The state of a walk over one container, carried across buffers.
#[derive(Debug, Clone)]
pub struct Brackets {
    open: u8,
    close: u8,
    depth: usize,
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escaped: bool,
    /// A byte of 0x80 or more was among the bytes walked.
    non_ascii: bool,
}

impl Brackets {
    /// A walk over the container that starts with `open` (`{` or `[`).
    pub fn new(open: u8) -> Brackets {
        let close = if open == b'{' { b'}' } else { b']' };
        Brackets {
            open,
            close,
            depth: 0,
            in_string: false,
            escaped: false,
            non_ascii: false,
        }
    }

    /// True when every byte walked so far, up to the container's end, is
    /// ASCII. An ASCII container is valid UTF-8 without a check: the
    /// splitter's 64-byte blocks see every byte anyway, and the parser
    /// then skips its own pass over them.
    pub fn ascii(&self) -> bool {
        !self.non_ascii
    }

    /// Walks `bytes` (the container's next bytes); the offset just past its
    /// closing bracket, or None when it goes on after them.
    pub fn find_end(&mut self, bytes: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
        {
            return self.find_end_avx2(bytes);
        }
        self.find_end_with(bytes, masks, prefix_xor)
    }

    /// [`Self::find_end`] with 32-byte compares: a third less time than
    /// with SSE2 (the splitter runs this over every byte of the events),
    /// and a string's extent from one carry-less multiply.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn find_end_avx2(&mut self, bytes: &[u8]) -> Option<usize> {
        #[target_feature(enable = "avx2,pclmulqdq")]
        fn walk(b: &mut Brackets, bytes: &[u8]) -> Option<usize> {
            // The closures inherit this function's features.
            b.find_end_with(
                bytes,
                |block, open, close| masks_avx2(block, open, close),
                |x| prefix_xor_clmul(x),
            )
        }
        // SAFETY: the caller checked that the CPU has AVX2 and PCLMULQDQ.
        unsafe { walk(self, bytes) }
    }

    /// The walk, with `masks` finding the characters of each block.
    #[inline(always)]
    fn find_end_with(
        &mut self,
        bytes: &[u8],
        masks: impl Fn(&[u8; 64], u8, u8) -> Masks,
        prefix: impl Fn(u64) -> u64,
    ) -> Option<usize> {
        let mut at = 0;
        while at + 64 <= bytes.len() {
            let block: &[u8; 64] = bytes[at..at + 64].try_into().ok()?;
            let m = masks(block, self.open, self.close);
            if m.backslash != 0 || self.escaped {
                // The bytewise walk looks at each byte's high bit itself.
                if let Some(n) = self.bytewise(block) {
                    return Some(at + n);
                }
            } else if let Some(n) = self.block(m, prefix(m.quote)) {
                // Bytes after the container are not its own.
                self.non_ascii |= m.high & (u64::MAX >> (64 - n)) != 0;
                return Some(at + n);
            } else {
                self.non_ascii |= m.high != 0;
            }
            at += 64;
        }
        self.bytewise(&bytes[at..]).map(|n| at + n)
    }

    /// True when the walk stopped inside a string.
    pub fn in_string(&self) -> bool {
        self.in_string
    }

    /// One block without backslashes; `inside` is the prefix XOR of its
    /// quote bits.
    #[inline(always)]
    fn block(&mut self, m: Masks, mut inside: u64) -> Option<usize> {
        if self.in_string {
            inside = !inside;
        }
        self.in_string = inside >> 63 == 1;
        let open = m.open & !inside;
        let close = m.close & !inside;
        if (close.count_ones() as usize) < self.depth {
            // The depth cannot reach zero in this block.
            self.depth = self.depth + open.count_ones() as usize - close.count_ones() as usize;
            return None;
        }
        let mut bits = open | close;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            if open >> i & 1 == 1 {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(i + 1);
                }
            }
            bits &= bits - 1;
        }
        None
    }

    fn bytewise(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            self.non_ascii |= !b.is_ascii();
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else if b == b'"' {
                self.in_string = true;
            } else if b == self.open {
                self.depth += 1;
            } else if b == self.close {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        None
    }
}

/// Bit `i` set where byte `i` of a block is the character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
    /// Bytes of 0x80 or more (not ASCII).
    high: u64,
}

impl Masks {
    /// The masks of the compared characters, in the order the vector
    /// versions compare them (`"`, `\\`, open, close), and of high bytes.
    #[cfg(target_arch = "x86_64")]
    fn of([quote, backslash, open, close]: [u64; 4], high: u64) -> Masks {
        Masks {
            quote,
            backslash,
            open,
            close,
            high,
        }
    }
}

/// Bit `i` of the result: the XOR of bits `0..=i` of `x` (inside a string
/// from its opening quote up to, not including, its closing one).
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// [`prefix_xor`] as one carry-less multiply by all ones: bit `i` of the
/// product is the XOR of bits `0..=i`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "pclmulqdq")]
fn prefix_xor_clmul(x: u64) -> u64 {
    use std::arch::x86_64::{_mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x};
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set_epi64x(0, -1), 0);
    _mm_cvtsi128_si64(product) as u64
}

#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8; 64], open: u8, close: u8) -> Masks {
    masks_sse2(block, open, close)
}

#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8; 64], open: u8, close: u8) -> Masks {
    masks_words(block, open, close)
}

/// [`masks`] with SSE2 compares (part of every x86_64 CPU): four times
/// the speed of [`masks_words`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn masks_sse2(block: &[u8; 64], open: u8, close: u8) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let chars = [b'"', b'\\', open, close];
    let mut out = [0u64; 4];
    let mut high = 0;
    for k in 0..4 {
        let lane = &block[16 * k..16 * k + 16];
        // SAFETY: SSE2 is in the x86_64 baseline, so these instructions
        // exist on every CPU this code runs on; the load reads the 16 bytes
        // of `lane` (checked above), unaligned loads being allowed.
        unsafe {
            let v = _mm_loadu_si128(lane.as_ptr().cast::<__m128i>());
            high |= u64::from(_mm_movemask_epi8(v) as u16) << (16 * k);
            for (m, &c) in out.iter_mut().zip(&chars) {
                let eq = _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
                *m |= u64::from(_mm_movemask_epi8(eq) as u16) << (16 * k);
            }
        }
    }
    Masks::of(out, high)
}

/// [`masks`] with AVX2 compares, 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
fn masks_avx2(block: &[u8; 64], open: u8, close: u8) -> Masks {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    let chars = [b'"', b'\\', open, close];
    let mut out = [0u64; 4];
    let mut high = 0;
    for k in 0..2 {
        let lane = &block[32 * k..32 * k + 32];
        // SAFETY: the load reads the 32 bytes of `lane` (checked above),
        // unaligned loads being allowed; AVX2 is enabled for this function.
        let v = unsafe { _mm256_loadu_si256(lane.as_ptr().cast::<__m256i>()) };
        high |= u64::from(_mm256_movemask_epi8(v) as u32) << (32 * k);
        for (m, &c) in out.iter_mut().zip(&chars) {
            let eq = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
            *m |= u64::from(_mm256_movemask_epi8(eq) as u32) << (32 * k);
        }
    }
    Masks::of(out, high)
}

/// [`masks`] eight bytes at a time in ordinary integers (any CPU).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn masks_words(block: &[u8; 64], open: u8, close: u8) -> Masks {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // The high bit of each byte, byte k at bit k.
    let gather = |highs: u64| ((highs >> 7) & ONES).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    // One bit per byte of `w` equal to `c`, byte k at bit k.
    let eq = |w: u64, c: u8| {
        let v = w ^ (ONES * u64::from(c));
        gather(!(((v & LOW7) + LOW7) | v | LOW7))
    };
    let mut m = Masks {
        quote: 0,
        backslash: 0,
        open: 0,
        close: 0,
        high: 0,
    };
    for (k, word) in block.chunks_exact(8).enumerate() {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        let w = u64::from_le_bytes(le);
        m.quote |= eq(w, b'"') << (8 * k);
        m.backslash |= eq(w, b'\\') << (8 * k);
        m.open |= eq(w, open) << (8 * k);
        m.close |= eq(w, close) << (8 * k);
        m.high |= gather(w & !LOW7) << (8 * k);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of the container at the start of `bytes`, byte by byte.
    fn naive_end(bytes: &[u8], open: u8) -> Option<usize> {
        Brackets::new(open).bytewise(bytes)
    }

    /// Deterministic pseudo-random bytes drawn from JSON's structural
    /// characters and a few letters, ASCII or not (the UTF-8 of `é` and a
    /// byte that is never UTF-8).
    fn noise(seed: u64, n: usize) -> Vec<u8> {
        let alphabet = b"{}[]\"\\\\ab,:  \xc3\xa9\xff";
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn word_masks_equal_the_native_ones() {
        for seed in 0..200 {
            let bytes = noise(seed, 64);
            let block: &[u8; 64] = bytes[..].try_into().unwrap();
            for open in [b'{', b'['] {
                let close = if open == b'{' { b'}' } else { b']' };
                let words = masks_words(block, open, close);
                assert_eq!(words, masks(block, open, close), "seed {seed}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2.
                    #[allow(unsafe_code)]
                    let wide = unsafe { masks_avx2(block, open, close) };
                    assert_eq!(words, wide, "seed {seed}");
                }
                for (i, &b) in bytes.iter().enumerate() {
                    assert_eq!(words.quote >> i & 1 == 1, b == b'"');
                    assert_eq!(words.open >> i & 1 == 1, b == open);
                    assert_eq!(words.high >> i & 1 == 1, !b.is_ascii());
                }
            }
        }
    }

    /// The carry-less multiply gives the shifts' prefix XOR, and the
    /// prefix XOR marks the bytes from each opening quote up to its closing
    /// one.
    #[test]
    fn prefix_xor_marks_the_inside_of_strings() {
        // A string from bit 2 to 3, another opened at 7 and still open.
        assert_eq!(prefix_xor(0b1001_0100), u64::MAX << 7 | 0b1100);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            let mut x = 0x2545_f491_4f6c_dd1d_u64;
            for _ in 0..10_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for v in [x, x & x >> 3, 1 << (x % 64), u64::MAX, 0] {
                    // SAFETY: the CPU has PCLMULQDQ.
                    #[allow(unsafe_code)]
                    let clmul = unsafe { prefix_xor_clmul(v) };
                    assert_eq!(clmul, prefix_xor(v), "{v:#x}");
                }
            }
        }
    }

    #[test]
    fn block_walk_agrees_with_the_bytewise_walk_in_any_pieces() {
        for seed in 0..400 {
            let mut doc = b"{\"a\": [1, {\"b\": \"}}\\\"{\"}], ".to_vec();
            doc.extend(noise(seed, 300));
            for open in [b'{', b'['] {
                doc[0] = open;
                let want = naive_end(&doc, open);
                for piece in [1, 7, 64, 100, 1000] {
                    let mut walk = Brackets::new(open);
                    let mut got = None;
                    let mut at = 0;
                    while at < doc.len() {
                        let end = (at + piece).min(doc.len());
                        if let Some(n) = walk.find_end(&doc[at..end]) {
                            got = Some(at + n);
                            break;
                        }
                        at = end;
                    }
                    assert_eq!(got, want, "seed {seed}, pieces of {piece}");
                    // The walk tells an ASCII container from another.
                    if let Some(end) = got {
                        assert_eq!(walk.ascii(), doc[..end].is_ascii(), "seed {seed}");
                    }
                }
            }
        }
    }

    /// A container is ASCII to the walk exactly when its bytes are: one
    /// byte of 0x80 or more anywhere, in a string or not, in a block with
    /// escapes or in the bytewise tail, clears it; one after its end does
    /// not.
    #[test]
    fn the_walk_tells_ascii_containers() {
        let ascii = format!("{{\"k\": \"{}\\\"\", \"l\": [1, 2]}}", "x".repeat(150));
        let end = ascii.len();
        assert_eq!(Brackets::new(b'{').find_end(ascii.as_bytes()), Some(end));
        let mut walk = Brackets::new(b'{');
        let tail = format!("{ascii}, \"é{}\"", "z".repeat(100));
        assert_eq!(walk.find_end(tail.as_bytes()), Some(end));
        assert!(walk.ascii());
        for at in 1..end - 1 {
            for byte in [0x80, 0xc3, 0xff] {
                let mut doc = ascii.clone().into_bytes();
                if doc[at] == b'"' || doc[at] == b'\\' || doc[at] == b'{' || doc[at] == b'}' {
                    continue;
                }
                doc[at] = byte;
                for piece in [7, 64, 1000] {
                    let mut walk = Brackets::new(b'{');
                    let mut from = 0;
                    let mut got = None;
                    while from < doc.len() && got.is_none() {
                        let to = (from + piece).min(doc.len());
                        got = walk.find_end(&doc[from..to]).map(|n| from + n);
                        from = to;
                    }
                    assert_eq!(got, Some(end), "byte {byte:#x} at {at}");
                    assert!(!walk.ascii(), "byte {byte:#x} at {at}, pieces of {piece}");
                }
            }
        }
    }

    #[test]
    fn long_strings_and_escapes_across_blocks() {
        let inner = format!("{}\\\"}}{}", "x".repeat(70), "]".repeat(80));
        let doc = format!("{{\"k\": \"{inner}\", \"l\": [{{}}]}} tail");
        let end = doc.find(" tail").unwrap();
        assert_eq!(Brackets::new(b'{').find_end(doc.as_bytes()), Some(end));
        assert_eq!(naive_end(doc.as_bytes(), b'{'), Some(end));
    }
}
