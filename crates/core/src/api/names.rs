//! Generated names and hashes: generateName's suffix, and the FNV hashes with apimachinery's
//! safe alphabet that kube's controllers build names from (pod-template-hash, revision names).

/// kube's generateName suffix: 5 characters from its consonant-and-digit alphabet, drawn
/// here from a counter (kube draws them at random).
pub fn name_suffix(n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n
        .wrapping_mul(0x2545_F491_4F6C_DD1D)
        .wrapping_add(0x1234_5678);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(x % ALPHABET.len() as u64) as usize] as char;
            x /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// FNV-1a, 32 bits: the hash family kube uses for pod-template-hash.
pub fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// FNV-1, 32 bits (Go's `fnv.New32`): what pkg/controller/history `HashControllerRevision`
/// hashes a revision's data with.
pub fn fnv32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h = h.wrapping_mul(0x0100_0193);
        h ^= u32::from(*b);
    }
    h
}

/// apimachinery's `rand.SafeEncodeString`: maps each character onto an alphabet without vowels
/// and look-alike characters, so generated names never spell words.
pub fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_1_and_1a_match_the_reference_vectors() {
        // The FNV reference test vectors for "" and "a".
        assert_eq!(fnv32(b""), 0x811c_9dc5);
        assert_eq!(fnv32(b"a"), 0x050c_5d7e);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
    }

    #[test]
    fn safe_encode_uses_kubes_alphabet() {
        assert_eq!(safe_encode("0"), "4");
        assert!(safe_encode("1234567890")
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)));
    }
}
