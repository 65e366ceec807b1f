//! Resource quantities as numbers: CPU in millicores, memory in bytes, from the strings
//! (`500m`, `128Mi`, `1G`) or numbers a manifest holds [apimachinery pkg/api/resource
//! `Quantity.MilliValue`, `Quantity.Value`]; the API server (QoS class) and the controllers
//! (scheduler, HPA) read requests and capacities through these.

use crate::json::Value;

/// Parses a CPU quantity into millicores (`500m`, `2`, `0.5`).
pub fn cpu_millis(q: &Value) -> u64 {
    match q {
        Value::Number(n) => (n.as_f64().unwrap_or(0.0) * 1000.0).round() as u64,
        Value::String(s) => {
            if let Some(m) = s.strip_suffix('m') {
                m.parse().unwrap_or(0)
            } else {
                (s.parse::<f64>().unwrap_or(0.0) * 1000.0).round() as u64
            }
        }
        _ => 0,
    }
}

/// Parses a memory quantity into bytes (`128Mi`, `1Gi`, `1G`, `1000`).
pub fn memory_bytes(q: &Value) -> u64 {
    let s = match q {
        Value::Number(n) => return n.as_u64().unwrap_or(0),
        Value::String(s) => s.as_str(),
        _ => return 0,
    };
    const SUFFIXES: [(&str, u64); 8] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    for (suffix, mult) in SUFFIXES {
        if let Some(num) = s.strip_suffix(suffix) {
            return (num.parse::<f64>().unwrap_or(0.0) * mult as f64) as u64;
        }
    }
    s.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn quantities_parse_like_kube() {
        assert_eq!(cpu_millis(&json!("500m")), 500);
        assert_eq!(cpu_millis(&json!("2")), 2000);
        assert_eq!(cpu_millis(&json!(0.25)), 250);
        assert_eq!(memory_bytes(&json!("128Mi")), 128 << 20);
        assert_eq!(memory_bytes(&json!("1G")), 1_000_000_000);
    }
}
