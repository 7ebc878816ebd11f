//! Hand-built zip archives and workbooks for hostile-input tests: members
//! whose data is raw deflate built here (a run of gigabytes in a few
//! kilobytes) and whose declared size is whatever the test says.

#![allow(dead_code)]

use flate2::{Compress, Compression, FlushCompress, Status};

/// One zip member: its name, deflated data, declared inflated size and
/// CRC-32.
pub struct Member {
    pub name: String,
    pub data: Vec<u8>,
    pub size: u64,
    pub crc: u32,
}

/// Raw deflate of `input` on `c`, ending with `flush`.
fn deflate_step(c: &mut Compress, mut input: &[u8], flush: FlushCompress) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(input.len() / 64 + 4096);
    loop {
        if out.capacity() - out.len() < 4096 {
            out.reserve(1 << 16);
        }
        let before = c.total_in();
        let status = c.compress_vec(input, &mut out, flush).unwrap();
        input = &input[(c.total_in() - before) as usize..];
        let room_left = out.capacity() > out.len();
        match flush {
            FlushCompress::Finish if status == Status::StreamEnd => return out,
            FlushCompress::Finish => {}
            _ if input.is_empty() && room_left => return out,
            _ => {}
        }
    }
}

impl Member {
    /// `bytes`, deflated, with their true size.
    pub fn new(name: &str, bytes: &[u8]) -> Member {
        let mut c = Compress::new(Compression::default(), false);
        Member {
            name: name.to_string(),
            data: deflate_step(&mut c, bytes, FlushCompress::Finish),
            size: bytes.len() as u64,
            crc: crc32fast::hash(bytes),
        }
    }

    /// `prefix`, then `count` bytes `fill`, then `suffix`, without holding
    /// the run: one deflate block of 1 MiB of `fill` (which refers only to
    /// the `fill` before it) repeated. `count` is at least 64 KiB.
    pub fn run(name: &str, prefix: &str, fill: u8, count: u64, suffix: &str) -> Member {
        const LEAD: u64 = 64 << 10;
        const BLOCK: u64 = 1 << 20;
        assert!(count >= LEAD);
        let (blocks, rest) = ((count - LEAD) / BLOCK, (count - LEAD) % BLOCK);
        let mut c = Compress::new(Compression::default(), false);
        let mut head = prefix.as_bytes().to_vec();
        head.extend(std::iter::repeat_n(fill, LEAD as usize));
        let mut data = deflate_step(&mut c, &head, FlushCompress::Sync);
        let block = deflate_step(&mut c, &vec![fill; BLOCK as usize], FlushCompress::Sync);
        let mut tail = vec![fill; rest as usize];
        tail.extend(suffix.as_bytes());
        let end = deflate_step(&mut c, &tail, FlushCompress::Finish);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        let mut one = crc32fast::Hasher::new();
        one.update(&vec![fill; BLOCK as usize]);
        for _ in 0..blocks {
            data.extend_from_slice(&block);
            crc.combine(&one);
        }
        data.extend_from_slice(&end);
        crc.update(&tail);
        Member {
            name: name.to_string(),
            data,
            size: prefix.len() as u64 + count + suffix.len() as u64,
            crc: crc.finalize(),
        }
    }

    /// The member declaring `size` inflated bytes, whatever it holds.
    pub fn declaring(mut self, size: u64) -> Member {
        self.size = size;
        self
    }
}

fn u16le(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u16::try_from(v).unwrap().to_le_bytes());
}

fn u32le(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&u32::try_from(v).unwrap().to_le_bytes());
}

/// A zip archive of `members` (deflated; sizes under 4 GiB, no zip64).
pub fn zip(members: &[Member]) -> Vec<u8> {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for m in members {
        let offset = out.len() as u64;
        for (buf, sig) in [(&mut out, 0x0403_4b50u64), (&mut central, 0x0201_4b50)] {
            u32le(buf, sig);
            if sig == 0x0201_4b50 {
                u16le(buf, 20); // version made by
            }
            for v in [20, 0, 8, 0, 0x21] {
                u16le(buf, v); // version needed, flags, deflate, time, date
            }
            u32le(buf, u64::from(m.crc));
            u32le(buf, m.data.len() as u64);
            u32le(buf, m.size);
            u16le(buf, m.name.len());
            u16le(buf, 0); // extra field
            if sig == 0x0201_4b50 {
                for v in [0, 0, 0] {
                    u16le(buf, v); // comment, disk, internal attributes
                }
                u32le(buf, 0); // external attributes
                u32le(buf, offset);
            }
            buf.extend_from_slice(m.name.as_bytes());
        }
        out.extend_from_slice(&m.data);
    }
    let (start, len) = (out.len() as u64, central.len() as u64);
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    for v in [0, 0, members.len(), members.len()] {
        u16le(&mut out, v);
    }
    u32le(&mut out, len);
    u32le(&mut out, start);
    u16le(&mut out, 0);
    out
}

const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PKG: &str = "http://schemas.openxmlformats.org/package/2006/relationships";

/// The XML of a worksheet whose `<sheetData>` holds `rows`.
pub fn sheet_xml(rows: &str) -> String {
    format!(r#"<worksheet xmlns="{MAIN}"><sheetData>{rows}</sheetData></worksheet>"#)
}

/// The opening of a worksheet, up to inside its first cell's inline text
/// (for a text run: close it with [`SHEET_RUN_END`]).
pub fn sheet_run_start(before: &str) -> String {
    format!(
        r#"<worksheet xmlns="{MAIN}"><sheetData>{before}<row r="99"><c r="A99" t="inlineStr"><is><t>"#
    )
}

/// What closes [`sheet_run_start`].
pub const SHEET_RUN_END: &str = "</t></is></c></row></sheetData></worksheet>";

/// A `gpu_timeline` sheet's rows: the header and `busy_time` / `idle_time`.
pub const TIMELINE_ROWS: &str = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>type</t></is></c><c r="B1" t="inlineStr"><is><t>time ms</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>busy_time</t></is></c><c r="B2"><v>5</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>idle_time</t></is></c><c r="B3"><v>1</v></c></row>"#;

/// A workbook with worksheets `names` (the i-th is the member
/// `xl/worksheets/sheet<i+1>.xml`, among `parts`) and the other `parts`
/// (e.g. `xl/sharedStrings.xml`).
pub fn workbook(names: &[&str], parts: Vec<Member>) -> Vec<u8> {
    let sheets: String = (1..=names.len())
        .map(|i| {
            format!(
                r#"<sheet name="{}" sheetId="{i}" r:id="rId{i}"/>"#,
                names[i - 1]
            )
        })
        .collect();
    let rels: String = (1..=names.len())
        .map(|i| {
            format!(
                r#"<Relationship Id="rId{i}" Type="{REL}/worksheet" Target="worksheets/sheet{i}.xml"/>"#
            )
        })
        .collect();
    let book =
        format!(r#"<workbook xmlns="{MAIN}" xmlns:r="{REL}"><sheets>{sheets}</sheets></workbook>"#);
    let book_rels = format!(r#"<Relationships xmlns="{PKG}">{rels}</Relationships>"#);
    let root_rels = format!(
        r#"<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
    );
    let mut members = vec![
        Member::new("_rels/.rels", root_rels.as_bytes()),
        Member::new("xl/workbook.xml", book.as_bytes()),
        Member::new("xl/_rels/workbook.xml.rels", book_rels.as_bytes()),
    ];
    members.extend(parts);
    zip(&members)
}

/// A shared-string table holding `strings` (plain text, no markup).
pub fn shared_strings(strings: &[&str]) -> Member {
    let items: String = strings
        .iter()
        .map(|s| format!("<si><t>{s}</t></si>"))
        .collect();
    let xml = format!(
        r#"<sst xmlns="{MAIN}" count="{n}" uniqueCount="{n}">{items}</sst>"#,
        n = strings.len()
    );
    Member::new("xl/sharedStrings.xml", xml.as_bytes())
}
