//! `json!`, as serde_json's macro writes it (the same syntax, the same [`Value`]), with the
//! code of each key and each value in one shared function instead of at every place it is
//! written: serde_json's expansion puts a key's `String`, the map's `insert`, the dropped old
//! value and `to_value(..).unwrap()`'s panic site into every literal, and Tandem builds
//! hundreds of them (messages to the panel, requests to providers). Issue #46: the worker's
//! module 5.5 KB gzip smaller (22 KB raw).
//!
//! The macro is serde_json 1.0's `json_internal` with only its two leaves changed ([`put`]
//! and [`val`]).

use serde::Serialize;
#[doc(hidden)]
pub use serde_json::{Map, Value};

/// One entry of an object literal (serde_json's `insert`, an old value dropped: a literal
/// repeating a key keeps the last, as serde_json's does).
#[doc(hidden)]
#[inline(never)]
pub fn put(map: &mut Map<String, Value>, key: impl Into<String>, value: Value) {
    map.insert(key.into(), value);
}

/// A value written as an expression: serde_json's `to_value(&x).unwrap()` (which fails only
/// for a map whose keys are not strings, which Tandem never builds).
#[doc(hidden)]
#[inline(never)]
pub fn val<T: Serialize + ?Sized>(value: &T) -> Value {
    #[allow(clippy::unwrap_used)]
    serde_json::to_value(value).unwrap()
}

/// serde_json's `json!` (see the module's comment).
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json_lean_internal!($($json)+)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_lean_internal {

    (@array [$($elems:expr,)*]) => {
        ::std::vec![$($elems,)*]
    };

    (@array [$($elems:expr),*]) => {
        ::std::vec![$($elems),*]
    };

    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!(null)] $($rest)*)
    };

    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!(true)] $($rest)*)
    };

    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!(false)] $($rest)*)
    };

    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!([$($array)*])] $($rest)*)
    };

    (@array [$($elems:expr,)*] {$($map:tt)*} $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!({$($map)*})] $($rest)*)
    };

    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!($next),] $($rest)*)
    };

    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::json_lean_internal!(@array [$($elems,)* $crate::json_lean_internal!($last)])
    };

    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::json_lean_internal!(@array [$($elems,)*] $($rest)*)
    };

    (@array [$($elems:expr),*] $unexpected:tt $($rest:tt)*) => {
        $crate::json_lean_unexpected!($unexpected)
    };

    (@object $object:ident () () ()) => {};

    (@object $object:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        $crate::json::lean::put(&mut $object, ($($key)+), $value);
        $crate::json_lean_internal!(@object $object () ($($rest)*) ($($rest)*));
    };

    (@object $object:ident [$($key:tt)+] ($value:expr) $unexpected:tt $($rest:tt)*) => {
        $crate::json_lean_unexpected!($unexpected);
    };

    (@object $object:ident [$($key:tt)+] ($value:expr)) => {
        $crate::json::lean::put(&mut $object, ($($key)+), $value);
    };

    (@object $object:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!(null)) $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!(true)) $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!(false)) $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!([$($array)*])) $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: {$($map:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!({$($map)*})) $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!($value)) , $($rest)*);
    };

    (@object $object:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::json_lean_internal!(@object $object [$($key)+] ($crate::json_lean_internal!($value)));
    };

    (@object $object:ident ($($key:tt)+) (:) $copy:tt) => {
        $crate::json_lean_internal!();
    };

    (@object $object:ident ($($key:tt)+) () $copy:tt) => {
        $crate::json_lean_internal!();
    };

    (@object $object:ident () (: $($rest:tt)*) ($colon:tt $($copy:tt)*)) => {
        $crate::json_lean_unexpected!($colon);
    };

    (@object $object:ident ($($key:tt)*) (, $($rest:tt)*) ($comma:tt $($copy:tt)*)) => {
        $crate::json_lean_unexpected!($comma);
    };

    (@object $object:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object ($key) (: $($rest)*) (: $($rest)*));
    };

    (@object $object:ident ($($key:tt)*) (: $($unexpected:tt)+) $copy:tt) => {
        $crate::json_lean_expect_expr_comma!($($unexpected)+);
    };

    (@object $object:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::json_lean_internal!(@object $object ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    (null) => {
        $crate::json::lean::Value::Null
    };

    (true) => {
        $crate::json::lean::Value::Bool(true)
    };

    (false) => {
        $crate::json::lean::Value::Bool(false)
    };

    ([]) => {
        $crate::json::lean::Value::Array(::std::vec![])
    };

    ([ $($tt:tt)+ ]) => {
        $crate::json::lean::Value::Array($crate::json_lean_internal!(@array [] $($tt)+))
    };

    ({}) => {
        $crate::json::lean::Value::Object($crate::json::lean::Map::new())
    };

    ({ $($tt:tt)+ }) => {
        $crate::json::lean::Value::Object({
            let mut object = $crate::json::lean::Map::new();
            $crate::json_lean_internal!(@object object () ($($tt)+) ($($tt)+));
            object
        })
    };

    ($other:expr) => {
        $crate::json::lean::val(&$other)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_lean_unexpected {
    () => {};
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_lean_expect_expr_comma {
    ($e:expr , $($tt:tt)*) => {};
}

#[cfg(test)]
mod tests {
    /// Every form serde_json's macro takes builds the same value here.
    #[test]
    fn builds_what_serde_json_builds() {
        let name = String::from("n");
        let key = "dynamic";
        let list = vec![1u8, 2];
        let none: Option<u32> = None;
        let ours = crate::json!({
            "a": null, "b": true, "c": false, "d": [], "e": {}, "f": [1, "x", null, [true], {"g": 2.5}],
            "name": name, "list": list, "none": none, (key): {"nested": {"deep": [key, -3]}},
            "a": "last wins",
        });
        let theirs = serde_json::json!({
            "a": null, "b": true, "c": false, "d": [], "e": {}, "f": [1, "x", null, [true], {"g": 2.5}],
            "name": name, "list": list, "none": none, (key): {"nested": {"deep": [key, -3]}},
            "a": "last wins",
        });
        assert_eq!(ours, theirs);
        assert_eq!(crate::json!([1, 2,]), serde_json::json!([1, 2,]));
        assert_eq!(crate::json!(name.len() + 1), serde_json::json!(2));
    }
}
