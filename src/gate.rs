//! `--fail-on` gates for CI, one grammar for every command that has them (`diff` and
//! `analyze`): a flag (`tools-added`) or a comparison `METRIC OP VALUE`
//! (`redundant-polls>5`, `schema-bytes>+5%`). Each command says which words it knows and
//! how its values read ([`Metrics`]); [`parse`] turns an expression into a [`Gate`], and
//! the command evaluates the gate against its own figures.
//!
//! The grammar (whitespace anywhere is ignored):
//! - `FLAG`: a word of the command's flag list;
//! - `METRIC OP VALUE`: `METRIC` a name of the command's metric table, `OP` one of `>`,
//!   `>=`, `<`, `<=` (a level also `=` or `==`), and `VALUE` as the command's [`Values`]
//!   say:
//!   - a level of one run (`analyze`): `N`, `$N` (dollars) or `N%` (a rate: `80%` is
//!     0.8); metric names in any case;
//!   - a change from side A to side B (`diff`): `N` (B's value), `+N`/`-N` (the change in
//!     units) or `N%`/`+N%`/`-N%` (the change relative to A, in percent).
//!
//! Every `VALUE` is a finite number: NaN and infinity make a gate that can never trip
//! (or always trips), so they are refused.

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=` or `==` (levels only)
    Eq,
}

/// Operators as written, two-character ones first.
const OPS: &[(&str, Op)] = &[
    (">=", Op::Ge),
    ("<=", Op::Le),
    ("==", Op::Eq),
    (">", Op::Gt),
    ("<", Op::Lt),
    ("=", Op::Eq),
];

impl Op {
    /// True when `lhs OP rhs` holds (`=`: equal within 1e-9).
    pub fn holds(self, lhs: f64, rhs: f64) -> bool {
        match self {
            Op::Gt => lhs > rhs,
            Op::Ge => lhs >= rhs,
            Op::Lt => lhs < rhs,
            Op::Le => lhs <= rhs,
            Op::Eq => (lhs - rhs).abs() < 1e-9,
        }
    }
}

/// A comparison's `VALUE`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// `N`: the value itself (for a change, B's value).
    Absolute(f64),
    /// `$N`: dollars.
    Dollars(f64),
    /// `N%` of a rate, as a fraction: `80%` is 0.8.
    Rate(f64),
    /// `+N` / `-N`: the change from A to B, in units (bytes, tools, tokens).
    Delta(f64),
    /// `N%` (`+N%`, `-N%`) of a change: relative to A, in percent.
    Relative(f64),
}

impl Threshold {
    /// The number compared with.
    pub fn value(self) -> f64 {
        match self {
            Threshold::Absolute(v)
            | Threshold::Dollars(v)
            | Threshold::Rate(v)
            | Threshold::Delta(v)
            | Threshold::Relative(v) => v,
        }
    }

    /// What the threshold is compared with for a change from `a` to `b`: the relative
    /// change in percent (from 0: 0 when `b` is 0 too, else infinity with the change's
    /// sign), the change `b - a`, or `b` itself.
    pub fn measure(self, a: f64, b: f64) -> f64 {
        match self {
            Threshold::Relative(_) if a == 0.0 => {
                if b == 0.0 {
                    0.0
                } else {
                    f64::INFINITY * (b - a).signum()
                }
            }
            Threshold::Relative(_) => (b - a) / a * 100.0,
            Threshold::Delta(_) => b - a,
            Threshold::Absolute(_) | Threshold::Dollars(_) | Threshold::Rate(_) => b,
        }
    }
}

/// How a command's comparison values read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// A level of one run: `N`, `$N`, `N%` (a rate); also tested for equality, and metric
    /// names match in any case.
    Level,
    /// A change from A to B: `N`, `+N`, `-N`, `N%` (relative); ordered comparisons only.
    Change,
}

impl Values {
    /// Characters that start an operator.
    fn op_chars(self) -> &'static [char] {
        match self {
            Values::Level => &['>', '<', '='],
            Values::Change => &['>', '<'],
        }
    }

    /// The metric name as looked up in the table.
    fn fold(self, name: &str) -> String {
        match self {
            Values::Level => name.to_ascii_lowercase(),
            Values::Change => name.to_string(),
        }
    }

    /// The forms named, after "is not a finite number", when a value does not read.
    fn forms(self) -> &'static str {
        match self {
            Values::Level => "",
            Values::Change => ", +N, -N or N%",
        }
    }

    /// Read `v` (`None`: not a finite number in any form).
    fn read(self, v: &str) -> Option<Threshold> {
        let finite = |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite());
        match self {
            Values::Level => {
                let n = v.trim_start_matches('$');
                match n.strip_suffix('%') {
                    Some(p) => finite(p).map(|x| Threshold::Rate(x / 100.0)),
                    None if n.len() < v.len() => finite(n).map(Threshold::Dollars),
                    None => finite(n).map(Threshold::Absolute),
                }
            }
            Values::Change => match v.strip_suffix('%') {
                Some(p) => finite(p).map(Threshold::Relative),
                None if v.starts_with(['+', '-']) => finite(v).map(Threshold::Delta),
                None => finite(v).map(Threshold::Absolute),
            },
        }
    }
}

/// What one command's gates can name: its flags, its metrics and how values read, and
/// the words its error messages add.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// Flags (a bare word is a condition of its own).
    pub flags: &'static [&'static str],
    /// Metric names, each with the id it stands for (an alias names the same id).
    pub names: &'static [(&'static str, &'static str)],
    /// How comparison values read.
    pub values: Values,
    /// What is wrong with an expression that is no flag and has no operator.
    pub no_operator: String,
    /// Appended to every error message (an example and the metric names), or empty; when
    /// empty, an unknown metric's message lists the metric names itself.
    pub hint: String,
}

/// What a gate tests.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// A flag of the command's list.
    Flag(&'static str),
    /// `METRIC OP VALUE`.
    Compare {
        /// The metric's id (from the command's table).
        metric: &'static str,
        /// Operator.
        op: Op,
        /// Value.
        threshold: Threshold,
    },
}

/// A parsed `--fail-on` expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// The expression as written.
    pub expr: String,
    /// What it tests.
    pub cond: Condition,
}

impl Gate {
    /// The comparison's metric id, operator and value (`None` for a flag).
    pub fn comparison(&self) -> Option<(&'static str, Op, Threshold)> {
        match self.cond {
            Condition::Compare {
                metric,
                op,
                threshold,
            } => Some((metric, op, threshold)),
            Condition::Flag(_) => None,
        }
    }
}

/// Errors of the gate grammar.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// An expression does not parse.
    #[error("bad --fail-on expression {expr:?}: {message}{hint}")]
    Bad {
        /// The expression as written.
        expr: String,
        /// What is wrong (with the accepted forms where that helps).
        message: String,
        /// The command's [`Metrics::hint`].
        hint: String,
    },
}

/// Parse `expr` against one command's `metrics`.
///
/// Errors: [`GateError::Bad`] naming the expression: no flag and no operator, an unknown
/// metric, or a value that is not a finite number.
pub fn parse(expr: &str, metrics: &Metrics) -> Result<Gate, GateError> {
    let err = |message: String| GateError::Bad {
        expr: expr.to_string(),
        message,
        hint: metrics.hint.clone(),
    };
    let s: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(f) = metrics.flags.iter().find(|f| **f == s) {
        return Ok(Gate {
            expr: expr.to_string(),
            cond: Condition::Flag(f),
        });
    }
    let pos = s
        .find(metrics.values.op_chars())
        .ok_or_else(|| err(metrics.no_operator.clone()))?;
    let (name, rest) = s.split_at(pos);
    let (op, value) = OPS
        .iter()
        .find_map(|(w, op)| rest.strip_prefix(w).map(|v| (*op, v)))
        .expect("rest starts with an operator");
    let name = metrics.values.fold(name);
    let metric = metrics
        .names
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, id)| *id)
        .ok_or_else(|| err(unknown_metric(&name, metrics)))?;
    let threshold = metrics.values.read(value).ok_or_else(|| {
        err(format!(
            "{value:?} is not a finite number{}",
            metrics.values.forms()
        ))
    })?;
    Ok(Gate {
        expr: expr.to_string(),
        cond: Condition::Compare {
            metric,
            op,
            threshold,
        },
    })
}

/// `unknown metric "NAME"`, with the metric names unless the hint lists them.
fn unknown_metric(name: &str, metrics: &Metrics) -> String {
    if !metrics.hint.is_empty() {
        return format!("unknown metric {name:?}");
    }
    let names: Vec<&str> = metrics.names.iter().map(|(n, _)| *n).collect();
    format!("unknown metric {name:?}; metrics: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(values: Values, hint: &str) -> Metrics {
        Metrics {
            flags: &["any"],
            names: &[("bytes", "body_bytes"), ("size", "body_bytes")],
            values,
            no_operator: "no operator".into(),
            hint: hint.into(),
        }
    }

    #[test]
    fn one_grammar_two_kinds_of_value() {
        let level = metrics(Values::Level, " (see the docs)");
        let change = metrics(Values::Change, "");
        let cmp = |e: &str, m: &Metrics| parse(e, m).unwrap().comparison().unwrap();
        assert_eq!(
            cmp("Size >= $2", &level),
            ("body_bytes", Op::Ge, Threshold::Dollars(2.0))
        );
        assert_eq!(
            cmp("bytes=80%", &level),
            ("body_bytes", Op::Eq, Threshold::Rate(0.8))
        );
        assert_eq!(
            cmp("bytes<-5%", &change),
            ("body_bytes", Op::Lt, Threshold::Relative(-5.0))
        );
        assert_eq!(
            cmp("bytes>+10", &change),
            ("body_bytes", Op::Gt, Threshold::Delta(10.0))
        );
        assert_eq!(
            parse(" any ", &change).unwrap().cond,
            Condition::Flag("any")
        );
        // `=` is no operator of a change, and a change's names keep their case.
        let e = parse("bytes=5", &change).unwrap_err().to_string();
        assert_eq!(e, r#"bad --fail-on expression "bytes=5": no operator"#);
        let e = parse("Bytes>5", &change).unwrap_err().to_string();
        assert!(
            e.ends_with("unknown metric \"Bytes\"; metrics: bytes, size"),
            "{e}"
        );
        let e = parse("nope>5", &level).unwrap_err().to_string();
        assert!(e.ends_with("unknown metric \"nope\" (see the docs)"), "{e}");
    }

    /// Found by an adversarial test (once per command before the grammar was shared):
    /// thresholds that can never trip were accepted.
    #[test]
    fn values_must_be_finite_numbers() {
        for (values, forms) in [(Values::Level, ""), (Values::Change, ", +N, -N or N%")] {
            let m = metrics(values, "");
            for never in [
                "bytes>NaN",
                "bytes>inf",
                "bytes<-inf",
                "bytes>1e999%",
                "bytes>x",
            ] {
                let e = parse(never, &m).unwrap_err().to_string();
                let v = &never[6..];
                assert!(
                    e.contains(&format!("{v:?} is not a finite number{forms}")),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn a_change_from_zero_is_infinite_in_percent() {
        assert_eq!(Threshold::Relative(5.0).measure(0.0, 0.0), 0.0);
        assert_eq!(Threshold::Relative(5.0).measure(0.0, 3.0), f64::INFINITY);
        assert_eq!(Threshold::Relative(5.0).measure(200.0, 100.0), -50.0);
        assert_eq!(Threshold::Delta(5.0).measure(200.0, 100.0), -100.0);
        assert_eq!(Threshold::Absolute(5.0).measure(200.0, 100.0), 100.0);
        assert!(Op::Eq.holds(0.1 + 0.2, 0.3));
    }
}
