//! Gzip (RFC 1952) members, one after another, read as one stream: the
//! header and trailer here, the deflate body by flate2's raw decoder.
//!
//! flate2's own gzip reader checks each member's CRC-32 with zlib-rs's
//! routine, which folds 16 bytes at a time: 3.5 ms of the 55.6 MB owlv2
//! trace's 85 ms. crc32fast picks its 512-bit fold at run time where the
//! CPU has it (0.9 ms there). The errors are worded as flate2's were, so
//! a damaged file reads the same.

use std::io::{self, BufRead, Read};

use flate2::bufread::DeflateDecoder;

/// Header flags (RFC 1952, 2.3.1).
const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
/// Bits a reader must refuse.
const FRESERVED: u8 = 0xe0;

/// The longest file name or comment read from a header.
const MAX_HEADER_FIELD: usize = u16::MAX as usize;

/// Where the reader is in the current member.
enum Place {
    Header,
    Body,
    /// The last member's trailer was read and checked.
    End,
}

/// A reader of the uncompressed bytes of every member of a gzip stream.
pub(crate) struct Gunzip<R: BufRead> {
    /// The body's decoder; its inner reader is where headers and trailers
    /// are read (it takes no byte past a deflate stream's end).
    body: DeflateDecoder<R>,
    crc: crc32fast::Hasher,
    /// The member's uncompressed size so far, modulo 2^32 (as its trailer
    /// keeps it).
    size: u32,
    place: Place,
}

impl<R: BufRead> Gunzip<R> {
    /// Reads gzip members from `input`.
    pub(crate) fn new(input: R) -> Self {
        Gunzip {
            body: DeflateDecoder::new(input),
            crc: crc32fast::Hasher::new(),
            size: 0,
            place: Place::Header,
        }
    }

    /// Checks the trailer of the member just inflated, then moves to the
    /// next member, or to the end when no byte follows.
    fn end_member(&mut self) -> io::Result<()> {
        let mut trailer = [0u8; 8];
        fill(self.body.get_mut(), &mut trailer)?;
        let word = |at: usize| u32::from_le_bytes([0, 1, 2, 3].map(|k| trailer[at + k]));
        let crc = std::mem::replace(&mut self.crc, crc32fast::Hasher::new()).finalize();
        if word(0) != crc || word(4) != self.size {
            return Err(corrupt());
        }
        self.size = 0;
        if self.body.get_mut().fill_buf()?.is_empty() {
            self.place = Place::End;
        } else {
            self.body.reset_data();
            self.place = Place::Header;
        }
        Ok(())
    }
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.place {
                Place::Header => {
                    read_header(self.body.get_mut())?;
                    self.place = Place::Body;
                }
                Place::Body => {
                    if out.is_empty() {
                        return Ok(0);
                    }
                    let n = self.body.read(out)?;
                    if n > 0 {
                        self.crc.update(&out[..n]);
                        self.size = self.size.wrapping_add(n as u32);
                        return Ok(n);
                    }
                    self.end_member()?;
                }
                Place::End => return Ok(0),
            }
        }
    }
}

/// Reads and checks a member's header, leaving `r` at its body.
fn read_header<R: BufRead>(r: &mut R) -> io::Result<()> {
    let mut fixed = [0u8; 10];
    fill(r, &mut fixed)?;
    let [id1, id2, method, flags, ..] = fixed;
    if id1 != 0x1f || id2 != 0x8b || method != 8 || flags & FRESERVED != 0 {
        return Err(bad_header());
    }
    // The header's own CRC covers every byte of it before the CRC.
    let mut crc = crc32fast::Hasher::new();
    crc.update(&fixed);
    if flags & FEXTRA != 0 {
        let mut xlen = [0u8; 2];
        fill(r, &mut xlen)?;
        crc.update(&xlen);
        let mut extra = vec![0u8; usize::from(u16::from_le_bytes(xlen))];
        fill(r, &mut extra)?;
        crc.update(&extra);
    }
    for field in [FNAME, FCOMMENT] {
        if flags & field != 0 {
            read_to_nul(r, &mut crc)?;
        }
    }
    if flags & FHCRC != 0 {
        let mut stored = [0u8; 2];
        fill(r, &mut stored)?;
        if u16::from_le_bytes(stored) != crc.finalize() as u16 {
            return Err(corrupt());
        }
    }
    Ok(())
}

/// Fills `buf` from `r`; an early end is "unexpected end of file" (the
/// error kind's own words, not `read_exact`'s).
fn fill<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<()> {
    let mut at = 0;
    while at < buf.len() {
        match r.read(&mut buf[at..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Passes over a zero-terminated header field, adding its bytes and the
/// zero to `crc`.
fn read_to_nul<R: BufRead>(r: &mut R, crc: &mut crc32fast::Hasher) -> io::Result<()> {
    let mut len = 0;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let (take, done) = match memchr::memchr(0, buf) {
            Some(k) => (k + 1, true),
            None => (buf.len(), false),
        };
        // The field without its zero may be at most the limit long.
        if len + take - usize::from(done) > MAX_HEADER_FIELD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "gzip header field too long",
            ));
        }
        crc.update(&buf[..take]);
        len += take;
        r.consume(take);
        if done {
            return Ok(());
        }
    }
}

fn bad_header() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "invalid gzip header")
}

fn corrupt() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "corrupt gzip stream does not have a matching checksum",
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// `data` as one gzip member by flate2's encoder, with `header`'s
    /// optional fields.
    fn member(data: &[u8], header: flate2::GzBuilder) -> Vec<u8> {
        let mut e = header.write(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// What each reader makes of `gz`: the bytes, or the error's text.
    fn both(gz: &[u8]) -> (Result<Vec<u8>, String>, Result<Vec<u8>, String>) {
        let read = |r: &mut dyn Read| {
            let mut out = Vec::new();
            r.read_to_end(&mut out)
                .map(|_| out)
                .map_err(|e| e.to_string())
        };
        let ours = read(&mut Gunzip::new(io::BufReader::with_capacity(64, gz)));
        let flate2s = read(&mut flate2::read::MultiGzDecoder::new(gz));
        (ours, flate2s)
    }

    /// Pseudo-random text that compresses a little.
    fn text(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"{}[]\",:abcdef0123456789 "[(x % 24) as usize]
            })
            .collect()
    }

    #[test]
    fn reads_members_and_header_fields_as_flate2_does() {
        let a = text(100_000, 1);
        let b = text(3_000, 2);
        let plain = member(&a, flate2::GzBuilder::new());
        let fields = member(
            &b,
            flate2::GzBuilder::new()
                .filename("trace.json")
                .comment("a comment")
                .extra(vec![1, 2, 3, 4])
                .mtime(7),
        );
        let empty = member(b"", flate2::GzBuilder::new());
        let mut two = plain.clone();
        two.extend_from_slice(&fields);
        two.extend_from_slice(&empty);
        for gz in [&plain, &fields, &empty, &two] {
            let (ours, theirs) = both(gz);
            assert_eq!(ours, theirs);
            assert!(ours.is_ok());
        }
        let mut whole = a.clone();
        whole.extend_from_slice(&b);
        assert_eq!(both(&two).0.unwrap(), whole);
    }

    #[test]
    fn header_crc_is_checked() {
        let mut gz = member(&text(500, 3), flate2::GzBuilder::new().filename("x"));
        gz[3] |= FHCRC;
        // The header's CRC goes after the file name's zero.
        let end = 10 + gz[10..].iter().position(|&c| c == 0).unwrap() + 1;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&gz[..end]);
        let good = (crc.finalize() as u16).to_le_bytes();
        for (stored, ok) in [(good, true), ([good[0] ^ 1, good[1]], false)] {
            let mut with = gz[..end].to_vec();
            with.extend_from_slice(&stored);
            with.extend_from_slice(&gz[end..]);
            let (ours, theirs) = both(&with);
            assert_eq!(ours, theirs);
            assert_eq!(ours.is_ok(), ok);
        }
    }

    /// Every cut, and a flipped bit at many places, of a two-member stream
    /// with trailing bytes: the same bytes or the same error as flate2's
    /// reader.
    #[test]
    fn damage_reads_as_flate2_reads_it() {
        let mut gz = member(&text(4_000, 4), flate2::GzBuilder::new().filename("t"));
        gz.extend(member(&text(500, 5), flate2::GzBuilder::new()));
        let n = gz.len();
        for cut in 0..n {
            let (ours, theirs) = both(&gz[..cut]);
            assert_eq!(ours, theirs, "cut at {cut}");
        }
        for at in (0..n).step_by(7) {
            for bit in [0, 3, 7] {
                let mut bad = gz.clone();
                bad[at] ^= 1 << bit;
                let (ours, theirs) = both(&bad);
                assert_eq!(ours, theirs, "bit {bit} of byte {at}");
            }
        }
        for tail in [&b"x"[..], b"\x1f", b"\x1f\x8b\x08", b"\0\0\0\0"] {
            let mut more = gz.clone();
            more.extend_from_slice(tail);
            let (ours, theirs) = both(&more);
            assert_eq!(ours, theirs, "tail {tail:?}");
        }
    }

    #[test]
    fn long_header_fields_are_refused() {
        let mut gz = vec![0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 3];
        gz.extend(std::iter::repeat_n(b'a', MAX_HEADER_FIELD + 1));
        gz.push(0);
        let (ours, theirs) = both(&gz);
        assert_eq!(ours, theirs);
        assert_eq!(ours.unwrap_err(), "gzip header field too long");
    }
}
