//! `json!`: a [`Value`](super::Value) from JSON-like text, as `serde_json::json!` builds one.
//!
//! An interpolated expression is borrowed, as serde_json's macro borrows it. A `Value`, `Map`,
//! string, number or bool becomes a `Value` directly (a `Value` is cloned, which shares its
//! maps); anything else goes through its `Serialize`, as in serde_json's macro.

/// Builds a [`Value`](crate::json::Value) from JSON-like text: `null`, `true`, arrays, objects
/// whose keys are string literals or parenthesised expressions, and any other expression as a
/// value. The same syntax as `serde_json::json!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __json {
    // Object members: the key's tokens up to `:`, then one value, then the rest.
    (@key $map:ident ()) => {};
    (@key $map:ident ($($key:tt)+) : null $(, $($rest:tt)*)?) => {
        $crate::__json!(@insert $map ($($key)+) $crate::json::Value::Null);
        $( $crate::__json!(@key $map () $($rest)*); )?
    };
    (@key $map:ident ($($key:tt)+) : [$($array:tt)*] $(, $($rest:tt)*)?) => {
        $crate::__json!(@insert $map ($($key)+) $crate::__json!([$($array)*]));
        $( $crate::__json!(@key $map () $($rest)*); )?
    };
    (@key $map:ident ($($key:tt)+) : {$($object:tt)*} $(, $($rest:tt)*)?) => {
        $crate::__json!(@insert $map ($($key)+) $crate::__json!({$($object)*}));
        $( $crate::__json!(@key $map () $($rest)*); )?
    };
    (@key $map:ident ($($key:tt)+) : $value:expr $(, $($rest:tt)*)?) => {
        $crate::__json!(@insert $map ($($key)+) $crate::__json!($value));
        $( $crate::__json!(@key $map () $($rest)*); )?
    };
    (@key $map:ident ($($key:tt)*) $next:tt $($rest:tt)*) => {
        $crate::__json!(@key $map ($($key)* $next) $($rest)*)
    };
    (@insert $map:ident ($key:literal) $value:expr) => {
        // A literal key is made at compile time, without copying it.
        let _ = $map.insert(const { $crate::json::Key::const_new($key) }, $value);
    };
    (@insert $map:ident ($($key:tt)+) $value:expr) => {
        let _ = $map.insert($crate::json::__private::key(&$($key)+), $value);
    };
    // Array elements, one at a time, gathered for one `vec!`.
    (@array [$($done:expr,)*]) => { ::std::vec![$($done,)*] };
    (@array [$($done:expr,)*] null $(, $($rest:tt)*)?) => {
        $crate::__json!(@array [$($done,)* $crate::json::Value::Null,] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] [$($array:tt)*] $(, $($rest:tt)*)?) => {
        $crate::__json!(@array [$($done,)* $crate::__json!([$($array)*]),] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] {$($object:tt)*} $(, $($rest:tt)*)?) => {
        $crate::__json!(@array [$($done,)* $crate::__json!({$($object)*}),] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] $value:expr $(, $($rest:tt)*)?) => {
        $crate::__json!(@array [$($done,)* $crate::__json!($value),] $($($rest)*)?)
    };

    (null) => { $crate::json::Value::Null };
    ([]) => { $crate::json::Value::Array($crate::json::List::new()) };
    ([ $($tt:tt)+ ]) => {
        $crate::json::Value::Array($crate::json::List::from($crate::__json!(@array [] $($tt)+)))
    };
    ({}) => { $crate::json::Value::Object($crate::json::Map::new()) };
    ({ $($tt:tt)+ }) => {{
        let mut map = $crate::json::Map::new();
        $crate::__json!(@key map () $($tt)+);
        $crate::json::Value::Object(map)
    }};
    ($other:expr) => {{
        #[allow(unused_imports)]
        use $crate::json::__private::{ViaSerialize as _, ViaValue as _};
        (&$crate::json::__private::Wrap(&$other)).to_json()
    }};
}

#[doc(hidden)]
pub mod __private {
    use crate::json::{Key, Map, Number, Value};
    use serde::Serialize;

    /// A borrowed interpolation, so that method lookup picks [`ViaValue`] where it applies.
    pub struct Wrap<'a, T: ?Sized>(pub &'a T);

    /// The types a `Value` is made of without serializing them.
    pub trait ViaValue {
        fn to_json(&self) -> Value;
    }

    /// Everything else: through `Serialize`, as serde_json's macro does.
    pub trait ViaSerialize {
        fn to_json(&self) -> Value;
    }

    impl<T: Serialize + ?Sized> ViaSerialize for &Wrap<'_, T> {
        #[cfg_attr(target_arch = "wasm32", inline(never))]
        fn to_json(&self) -> Value {
            // serde_json's macro unwraps here too: only a map with non-string keys fails.
            crate::json::to_value(self.0).expect("a value that serializes to JSON")
        }
    }

    macro_rules! via_value {
        ($($t:ty => |$v:ident| $e:expr;)*) => {$(
            impl ViaValue for Wrap<'_, $t> {
                // One body for every call site of `json!` (the wasm's size).
                #[cfg_attr(target_arch = "wasm32", inline(never))]
                fn to_json(&self) -> Value {
                    let $v = self.0;
                    $e
                }
            }
        )*};
    }

    via_value! {
        Value => |v| v.clone();
        &Value => |v| (*v).clone();
        Map => |m| Value::Object(m.clone());
        &Map => |m| Value::Object((*m).clone());
        str => |s| Value::String(s.into());
        &str => |s| Value::String((*s).into());
        String => |s| Value::String(s.as_str().into());
        &String => |s| Value::String(s.as_str().into());
        Key => |s| Value::String(s.clone());
        bool => |b| Value::Bool(*b);
        Number => |n| Value::Number(n.clone());
        i32 => |n| Value::from(*n);
        i64 => |n| Value::from(*n);
        u32 => |n| Value::from(*n);
        u64 => |n| Value::from(*n);
        usize => |n| Value::from(*n);
        Option<Value> => |v| v.clone().unwrap_or(Value::Null);
        Option<&Value> => |v| v.cloned().unwrap_or(Value::Null);
        Vec<Value> => |v| Value::Array(v.clone().into());
    }

    /// An object key from what `json!` was given.
    pub fn key<K: AsRef<str> + ?Sized>(k: &K) -> Key {
        Key::from(k.as_ref())
    }
}
