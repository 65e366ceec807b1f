//! JSON pointers read when the program is compiled ([`path!`](crate::json::path)).
//!
//! [`Value::pointer`] reads its text on every call: it finds where each token ends, then the
//! map's search works out the token's head ([`super::map`]). The engine's reads name the same
//! few dozen pointers (`/status/phase`, `/metadata/ownerReferences`) on every object of every
//! event, so for those the tokens and their heads are worked out once, by
//! the compiler, and [`Value::path`] only searches.

use super::Value;

/// One token of a [`Path`]: its text (never holding `~`), and its head as a stored map's keys
/// carry theirs. (An array index is read from the text when an array is met: rare in the
/// engine's reads, and a word more a token in the module's data.)
#[derive(Debug)]
pub struct Token {
    text: &'static str,
    head: u64,
}

/// A JSON pointer's tokens, read at compile time by [`path!`](crate::json::path).
#[derive(Clone, Copy, Debug)]
pub struct Path(&'static [Token]);

impl Path {
    #[doc(hidden)]
    pub const fn new(tokens: &'static [Token]) -> Path {
        Path(tokens)
    }
}

/// How many tokens `pointer` has: it is empty, or starts with `/` and holds no `~` (a pointer
/// that does is read at run time, with [`Value::pointer`]); anything else fails the build.
#[doc(hidden)]
pub const fn count(pointer: &str) -> usize {
    let b = pointer.as_bytes();
    if b.is_empty() {
        return 0;
    }
    assert!(b[0] == b'/', "a JSON pointer starts with /");
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i] != b'~', "a pointer holding ~ is read at run time");
        if b[i] == b'/' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// `pointer`'s `N` tokens ([`count`]).
#[doc(hidden)]
pub const fn tokens<const N: usize>(pointer: &'static str) -> [Token; N] {
    let mut out = [const { Token { text: "", head: 0 } }; N];
    let mut rest = pointer.as_bytes();
    let mut t = 0;
    while t < N {
        // `rest` starts at a `/`; the token runs to the next one.
        let mut end = 1;
        while end < rest.len() && rest[end] != b'/' {
            end += 1;
        }
        let (token, after) = rest.split_at(end);
        let (_, token) = token.split_at(1);
        let Ok(text) = std::str::from_utf8(token) else {
            panic!("a pointer's tokens are text")
        };
        out[t] = Token {
            text,
            head: super::map::head_of(token),
        };
        rest = after;
        t += 1;
    }
    out
}

/// A [`Path`] from a pointer literal: `path!("/status/phase")`. The literal is empty or starts
/// with `/`, and holds no `~` (a pointer that does is read at run time); anything else fails the
/// build.
#[doc(hidden)]
#[macro_export]
macro_rules! __path {
    ($pointer:literal) => {{
        const N: usize = $crate::json::path_impl::count($pointer);
        const TOKENS: [$crate::json::path_impl::Token; N] =
            $crate::json::path_impl::tokens::<N>($pointer);
        $crate::json::Path::new(&TOKENS)
    }};
}

impl Value {
    /// The value at `path`: [`Value::pointer`] of the text it was made from, the same answer
    /// without reading the text.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn path(&self, path: Path) -> Option<&Value> {
        let mut target = self;
        for t in path.0 {
            target = match target {
                Value::Object(map) => map.get_by_head(t.text, t.head)?,
                Value::Array(list) => list.get(super::parse_index(t.text)?)?,
                _ => return None,
            };
        }
        Some(target)
    }
}

/// A pointer to read: text, read when used, or a [`Path`] read when compiled.
#[derive(Clone, Copy, Debug)]
pub enum Pointer<'a> {
    Text(&'a str),
    Path(Path),
}

impl<'a> From<&'a str> for Pointer<'a> {
    fn from(text: &'a str) -> Self {
        Pointer::Text(text)
    }
}

impl<'a> From<&&'a str> for Pointer<'a> {
    fn from(text: &&'a str) -> Self {
        Pointer::Text(text)
    }
}

impl<'a> From<&'a String> for Pointer<'a> {
    fn from(text: &'a String) -> Self {
        Pointer::Text(text)
    }
}

impl From<Path> for Pointer<'_> {
    fn from(path: Path) -> Self {
        Pointer::Path(path)
    }
}

impl Value {
    /// The value at `pointer`, text or [`Path`].
    #[inline]
    pub fn at_pointer(&self, pointer: Pointer<'_>) -> Option<&Value> {
        match pointer {
            Pointer::Text(text) => self.pointer(text),
            Pointer::Path(path) => self.path(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;
    use proptest::prelude::*;

    /// A `Path` of a pointer known only at run time (the const functions run as any other).
    fn leaked(pointer: &str) -> Path {
        let pointer: &'static str = Box::leak(pointer.to_owned().into_boxed_str());
        let tokens: Vec<Token> = match count(pointer) {
            0 => Vec::new(),
            n => {
                // The const function takes its count as a parameter; read one token at a time.
                let mut out = Vec::with_capacity(n);
                let mut rest = pointer;
                for _ in 0..n {
                    let end = rest[1..].find('/').map_or(rest.len(), |i| i + 1);
                    let [t] = tokens::<1>(&rest[..end]);
                    out.push(t);
                    rest = &rest[end..];
                }
                out
            }
        };
        Path(Box::leak(tokens.into_boxed_slice()))
    }

    #[test]
    fn a_path_reads_what_its_pointer_reads() {
        let v = json!({
            "status": {"phase": "Running", "conditions": [{"type": "Ready"}, {"type": "x"}]},
            "metadata": {"name": "a", "resourceVersion": "7", "": {"": 1}},
            "10": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        });
        let mut stored = v.clone();
        stored.compact();
        for p in [
            "",
            "/status/phase",
            "/status/conditions/1/type",
            "/status/conditions/01/type",
            "/status/conditions/+1/type",
            "/status/conditions/2/type",
            "/status/conditions/-",
            "/status/phase/x",
            "/metadata/resourceVersion",
            "/metadata/resourceVersio",
            "/metadata//",
            "/metadata/",
            "/10/11",
            "/10/99999999999999999999999",
            "/",
        ] {
            for v in [&v, &stored] {
                assert_eq!(v.path(leaked(p)), v.pointer(p), "{p}");
            }
        }
        assert_eq!(
            v.path(crate::json::path!("/status/conditions/0/type")),
            Some(&json!("Ready"))
        );
        assert_eq!(v.path(crate::json::path!("")), Some(&v));
    }

    proptest! {
        /// Any pointer without `~` over keys alike in their first bytes and lengths.
        #[test]
        fn paths_read_as_pointers(
            keys in proptest::collection::vec("[ab0]{0,9}", 1..6),
            pointer in proptest::collection::vec("[ab0]{0,9}", 0..4),
        ) {
            let mut level = json!(["x", "y"]);
            for k in keys.iter().rev() {
                let mut m = crate::json::Map::new();
                for sibling in &keys {
                    m.insert(sibling.as_str(), json!(sibling.len()));
                }
                m.insert(k.as_str(), level);
                level = crate::json::Value::Object(m);
            }
            let mut stored = level.clone();
            stored.compact();
            let text: String = pointer.iter().map(|t| format!("/{t}")).collect();
            for v in [&level, &stored] {
                prop_assert_eq!(v.path(leaked(&text)), v.pointer(&text));
            }
            let down: String = keys.iter().map(|t| format!("/{t}")).collect();
            prop_assert_eq!(stored.path(leaked(&down)), stored.pointer(&down));
        }
    }
}
