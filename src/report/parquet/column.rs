//! The columns of the Parquet tables: a named column of one type, required or nullable,
//! built from an iterator of values (text passes the one redaction function).

use crate::trace::redact::redact_text;

/// One column's values.
pub(super) enum Values {
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
}

/// A named column; `required` columns have no nulls.
pub(super) struct Col {
    pub(super) name: &'static str,
    pub(super) required: bool,
    pub(super) values: Values,
}

pub(super) fn i64s(name: &'static str, v: impl Iterator<Item = i64>) -> Col {
    Col {
        name,
        required: true,
        values: Values::I64(v.map(Some).collect()),
    }
}
pub(super) fn opt_i64s(name: &'static str, v: impl Iterator<Item = Option<i64>>) -> Col {
    Col {
        name,
        required: false,
        values: Values::I64(v.collect()),
    }
}
pub(super) fn f64s(name: &'static str, v: impl Iterator<Item = f64>) -> Col {
    Col {
        name,
        required: true,
        values: Values::F64(v.map(Some).collect()),
    }
}
pub(super) fn opt_f64s(name: &'static str, v: impl Iterator<Item = Option<f64>>) -> Col {
    Col {
        name,
        required: false,
        values: Values::F64(v.collect()),
    }
}
/// Text columns pass the one redaction function (targets and paths come from bodies).
pub(super) fn strs(name: &'static str, v: impl Iterator<Item = String>) -> Col {
    Col {
        name,
        required: true,
        values: Values::Str(v.map(|s| Some(redact_text(&s))).collect()),
    }
}
pub(super) fn opt_strs(name: &'static str, v: impl Iterator<Item = Option<String>>) -> Col {
    Col {
        name,
        required: false,
        values: Values::Str(v.map(|s| s.map(|s| redact_text(&s))).collect()),
    }
}
