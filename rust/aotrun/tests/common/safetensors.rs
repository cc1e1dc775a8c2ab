//! Writes small .safetensors files for the tests (float32 tensors only).

use std::path::Path;

/// Writes `tensors` (name, shape, values) to `path` as float32.
pub fn write_f32(path: &Path, tensors: &[(&str, &[i64], &[f32])]) -> std::io::Result<()> {
    let mut header = String::from("{");
    let mut offset = 0usize;
    for (i, (name, shape, values)) in tensors.iter().enumerate() {
        let end = offset + values.len() * 4;
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{offset},{end}]}}",
            dims.join(",")
        ));
        offset = end;
    }
    header.push('}');
    // The data starts 8-byte aligned: pad the header with spaces.
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    for (_, _, values) in tensors {
        bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    }
    std::fs::write(path, bytes)
}
