//! Reading FILE arguments (`-` is stdin) into parsed Kubernetes objects.

use std::io::Read;

use converge_core::json::Value;
use converge_core::parse::{parse_document_bytes, MAX_INPUT_BYTES};

use crate::CliError;

/// How a FILE argument is named in messages: `<stdin>` for `-`.
pub fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// Reads and parses one FILE argument; errors name the file.
pub fn read_objects(path: &str) -> Result<Vec<Value>, CliError> {
    let name = display_name(path);
    let bytes = read_bytes(path).map_err(|e| CliError::input(format!("{name}: {e}")))?;
    parse_document_bytes(&bytes).map_err(|e| CliError::input(format!("{name}: {e}")))
}

/// Reads a FILE argument's bytes (up to one byte past the size limit).
pub fn read_file_bytes(path: &str) -> Result<Vec<u8>, String> {
    read_bytes(path)
}

fn read_bytes(path: &str) -> Result<Vec<u8>, String> {
    // Read one byte past the limit so the parser can report the size instead of reading it all.
    let limit = MAX_INPUT_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    let result = if path == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        let meta = std::fs::metadata(path).map_err(|e| io_message(&e))?;
        if meta.is_dir() {
            return Err("is a directory".into());
        }
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    result.map_err(|e| io_message(&e))?;
    Ok(bytes)
}

/// The OS error without Rust's ` (os error 2)` suffix, lower-cased like Unix tools print it.
fn io_message(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_string(),
                None => text,
            }
        }
    }
}
