//! The little of Kubernetes' protobuf encoding that kubectl sends where it uses a typed client
//! (`kubectl auth can-i` posts a `SelfSubjectAccessReview` as
//! `application/vnd.kubernetes.protobuf`): the `k8s\0` envelope (`runtime.Unknown`) and the
//! review's resource attributes, read into the JSON shape the rest of the server reads
//! [apimachinery pkg/runtime/serializer/protobuf/protobuf.go; k8s.io/api
//! authorization/v1/generated.proto]. Everything else is refused as before.

use crate::json::{json, Map, Value};

/// The `k8s\0` prefix of every protobuf-encoded object.
pub const MAGIC: &[u8] = b"k8s\0";

/// One field: its number and its bytes (length-delimited) or varint value.
enum Field<'a> {
    Varint,
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn fields(b: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let tag = varint(b, &mut i)?;
        let (number, wire) = (tag >> 3, tag & 7);
        match wire {
            0 => {
                varint(b, &mut i)?;
                out.push((number, Field::Varint));
            }
            2 => {
                let len = usize::try_from(varint(b, &mut i)?).ok()?;
                let end = i.checked_add(len).filter(|e| *e <= b.len())?;
                out.push((number, Field::Bytes(&b[i..end])));
                i = end;
            }
            1 => i = i.checked_add(8).filter(|e| *e <= b.len())?,
            5 => i = i.checked_add(4).filter(|e| *e <= b.len())?,
            _ => return None,
        }
    }
    Some(out)
}

fn bytes_field<'a>(fs: &[(u64, Field<'a>)], n: u64) -> Option<&'a [u8]> {
    fs.iter().find_map(|(k, f)| match f {
        Field::Bytes(b) if *k == n => Some(*b),
        _ => None,
    })
}

/// A protobuf `SelfSubjectAccessReview` as its JSON form, or `None` if it is not one.
pub fn self_subject_access_review(body: &[u8]) -> Option<Value> {
    let unknown = fields(body.strip_prefix(MAGIC)?)?;
    let raw = bytes_field(&unknown, 2)?;
    let review = fields(raw)?;
    let spec = fields(bytes_field(&review, 2).unwrap_or(&[]))?;
    let mut attrs = Map::new();
    if let Some(ra) = bytes_field(&spec, 1) {
        let names = [
            "namespace",
            "verb",
            "group",
            "version",
            "resource",
            "subresource",
            "name",
        ];
        for (k, f) in fields(ra)? {
            if let (Field::Bytes(b), Some(name)) = (f, names.get((k as usize).wrapping_sub(1))) {
                attrs.insert((*name).to_owned(), json!(String::from_utf8_lossy(b)));
            }
        }
    }
    Some(json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"resourceAttributes": attrs},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u8, b: &[u8]) -> Vec<u8> {
        let mut v = vec![(n << 3) | 2, b.len() as u8];
        v.extend_from_slice(b);
        v
    }

    #[test]
    fn a_protobuf_review_reads_as_its_json() {
        let attrs = [
            field(1, b"default"),
            field(2, b"patch"),
            field(3, b"apps"),
            field(5, b"deployments"),
            field(6, b"status"),
        ]
        .concat();
        let spec = field(1, &attrs);
        let review = field(2, &spec);
        let unknown = [MAGIC.to_vec(), field(1, b""), field(2, &review)].concat();
        let v = self_subject_access_review(&unknown).unwrap();
        assert_eq!(
            v["spec"]["resourceAttributes"],
            json!({"namespace": "default", "verb": "patch", "group": "apps", "resource": "deployments", "subresource": "status"})
        );
        assert!(self_subject_access_review(b"k8s\0\xff").is_none());
        assert!(self_subject_access_review(b"{}").is_none());
    }
}
