//! Just enough PNG decoding to look at a screenshot's pixels: 8-bit RGB or RGBA, not interlaced
//! (what Chromium writes).

use std::io::Read;

pub struct Image {
    pub width: usize,
    pub height: usize,
    /// RGB triples, row by row.
    pub pixels: Vec<[u8; 3]>,
}

pub fn decode(bytes: &[u8]) -> Result<Image, String> {
    if bytes.len() < 8 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return Err("not a PNG file".into());
    }
    let (mut at, mut header, mut data) = (8, None, vec![]);
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let body = bytes.get(at + 8..at + 8 + len).ok_or("truncated chunk")?;
        match kind {
            b"IHDR" => header = Some(body.to_vec()),
            b"IDAT" => data.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let h = header.ok_or("no IHDR")?;
    let width = u32::from_be_bytes(h[0..4].try_into().unwrap()) as usize;
    let height = u32::from_be_bytes(h[4..8].try_into().unwrap()) as usize;
    let (depth, colour, interlace) = (h[8], h[9], h[12]);
    let channels = match colour {
        2 => 3,
        6 => 4,
        other => return Err(format!("colour type {other} not supported")),
    };
    if depth != 8 || interlace != 0 {
        return Err(format!("bit depth {depth}, interlace {interlace} not supported"));
    }
    let mut raw = vec![];
    flate2::read::ZlibDecoder::new(&data[..]).read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let stride = width * channels;
    if raw.len() < height * (stride + 1) {
        return Err("image data too short".into());
    }
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width * height);
    for y in 0..height {
        let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let row = unfilter(line[0], &line[1..], &prev, channels)?;
        pixels.extend(row.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = row;
    }
    Ok(Image { width, height, pixels })
}

fn unfilter(filter: u8, line: &[u8], prev: &[u8], bpp: usize) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; line.len()];
    for i in 0..line.len() {
        let a = if i >= bpp { out[i - bpp] as i16 } else { 0 };
        let b = prev[i] as i16;
        let c = if i >= bpp { prev[i - bpp] as i16 } else { 0 };
        let predictor = match filter {
            0 => 0,
            1 => a,
            2 => b,
            3 => (a + b) / 2,
            4 => {
                let p = a + b - c;
                let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                if pa <= pb && pa <= pc {
                    a
                } else if pb <= pc {
                    b
                } else {
                    c
                }
            }
            other => return Err(format!("unknown filter {other}")),
        };
        out[i] = line[i].wrapping_add(predictor as u8);
    }
    Ok(out)
}
