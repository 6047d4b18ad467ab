//! The arguments of `tools.NAME({…})` calls in code-mode `exec` JavaScript, read from the
//! source text without running it: the first argument's object literal, member by member.
//!
//! Tolerant by design (the source is whatever the model wrote): keys may be identifiers or
//! quoted; a value is a number, a string (`"…"`, `'…'`, a template without `${}`), or any
//! other expression, kept as its text ([`Lit::Expr`]); comments are skipped; a literal that
//! never closes yields the members read so far. Nothing here evaluates JavaScript, so
//! `session_id: r.session_id` is an expression, not a number.

/// A member value of an object literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lit {
    /// A number, as written (`81003`, `1e3`, `-1`).
    Num(String),
    /// A string literal's text (escapes decoded for `\n`, `\t`, `\\` and quotes).
    Str(String),
    /// Anything else (a variable, a call, an object), as written, trimmed.
    Expr(String),
}

impl Lit {
    /// The value as an id: a number's text or a string's content; `None` for an
    /// expression.
    pub fn as_id(&self) -> Option<&str> {
        match self {
            Lit::Num(s) | Lit::Str(s) => Some(s),
            Lit::Expr(_) => None,
        }
    }
}

/// The members of one object literal, in source order.
pub type Members = Vec<(String, Lit)>;

/// The value of member `key`, if the literal has it.
pub fn member<'m>(members: &'m Members, key: &str) -> Option<&'m Lit> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The first-argument object literal of every call of tool `name` in `source`
/// (`tools.write_stdin({…})`, `tools["write_stdin"]({…})`, or a bare `write_stdin({…})`),
/// in source order. A call whose first argument is not an object literal gives no entry.
pub fn calls_of(source: &str, name: &str) -> Vec<Members> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = source[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before = source[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue; // part of a longer identifier
        }
        let rest = source[from..].trim_start_matches(['"', '\'', ']']);
        let Some(args) = rest.trim_start().strip_prefix('(') else {
            continue;
        };
        if let Some(obj) = args.trim_start().strip_prefix('{') {
            out.push(object(obj));
        }
    }
    out
}

/// The members of an object literal whose text starts just after its `{`.
fn object(text: &str) -> Members {
    let mut p = Cursor { s: text, i: 0 };
    let mut members = Vec::new();
    loop {
        p.skip_blank();
        match p.peek() {
            None | Some('}') => return members,
            Some(',') => {
                p.i += 1;
                continue;
            }
            _ => {}
        }
        let Some(key) = p.key() else { return members };
        p.skip_blank();
        if p.peek() == Some(':') {
            p.i += 1;
            p.skip_blank();
            members.push((key, p.value()));
        } else {
            // shorthand `{session_id}`: the value is the variable of that name
            members.push((key.clone(), Lit::Expr(key)));
        }
    }
}

/// A position in the literal's text.
struct Cursor<'s> {
    s: &'s str,
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.i..].chars().next()
    }

    /// Skip whitespace and `//` / `/* */` comments.
    fn skip_blank(&mut self) {
        loop {
            let rest = &self.s[self.i..];
            let trimmed = rest.trim_start();
            self.i += rest.len() - trimmed.len();
            if let Some(c) = trimmed.strip_prefix("//") {
                self.i += 2 + c.find('\n').unwrap_or(c.len());
            } else if let Some(c) = trimmed.strip_prefix("/*") {
                self.i += 2 + c.find("*/").map_or(c.len(), |e| e + 2);
            } else {
                return;
            }
        }
    }

    /// A member key: an identifier or a quoted string.
    fn key(&mut self) -> Option<String> {
        match self.peek()? {
            q @ ('"' | '\'' | '`') => self.string(q),
            _ => {
                let rest = &self.s[self.i..];
                let n = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .unwrap_or(rest.len());
                (n > 0).then(|| {
                    self.i += n;
                    rest[..n].to_string()
                })
            }
        }
    }

    /// A member value, up to the `,` or `}` that ends it.
    fn value(&mut self) -> Lit {
        let start = self.i;
        if let Some(q @ ('"' | '\'' | '`')) = self.peek() {
            if let Some(s) = self.string(q) {
                let save = self.i;
                self.skip_blank();
                if matches!(self.peek(), None | Some(',' | '}')) && !(q == '`' && s.contains("${"))
                {
                    return Lit::Str(s);
                }
                self.i = save;
            }
        }
        self.i = start;
        self.expression();
        let text = self.s[start..self.i].trim();
        let is_num = !text.is_empty()
            && text.parse::<f64>().is_ok()
            && text
                .chars()
                .all(|c| c.is_ascii_digit() || "+-.eE".contains(c));
        if is_num {
            Lit::Num(text.to_string())
        } else {
            Lit::Expr(text.to_string())
        }
    }

    /// Skip an expression: up to a `,` or `}` outside brackets and strings.
    fn expression(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '"' | '\'' | '`' => {
                    if self.string(c).is_none() {
                        return;
                    }
                    continue;
                }
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth > 0 => depth -= 1,
                ',' | '}' | ')' if depth == 0 => return,
                _ => {}
            }
            self.i += c.len_utf8();
        }
    }

    /// A string literal opened by `q` at the cursor: its text (common escapes decoded),
    /// the cursor after its closing quote; `None` (cursor at the end) when it never closes.
    fn string(&mut self, q: char) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.s[self.i + 1..].char_indices();
        while let Some((k, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c if c == q => {
                    self.i += 1 + k + c.len_utf8();
                    return Some(out);
                }
                c => out.push(c),
            }
        }
        self.i = self.s.len();
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Lit {
        Lit::Str(s.into())
    }

    #[test]
    fn members_of_each_call_in_source_order() {
        let src = "// @exec: {\"yield_time_ms\": 1000}\nconst r = await tools.write_stdin({session_id: 81003, chars: \"\", yield_time_ms: 1000});\ntext(r);\nawait tools.write_stdin({ 'session_id': \"7\", chars: '\\n', /* again */ });";
        let calls = calls_of(src, "write_stdin");
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[0],
            [
                ("session_id".to_string(), Lit::Num("81003".into())),
                ("chars".to_string(), lit("")),
                ("yield_time_ms".to_string(), Lit::Num("1000".into())),
            ]
        );
        assert_eq!(member(&calls[1], "session_id"), Some(&lit("7")));
        assert_eq!(member(&calls[1], "chars"), Some(&lit("\n")));
    }

    #[test]
    fn expressions_shorthand_and_unclosed_literals_are_kept_as_far_as_they_go() {
        let src = "for (const s of ids) await tools.write_stdin({session_id: r.session_id, chars: `${x}`, n: f(1, {a: 2}), session});";
        let m = &calls_of(src, "write_stdin")[0];
        assert_eq!(
            m.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["session_id", "chars", "n", "session"]
        );
        assert_eq!(
            member(m, "session_id"),
            Some(&Lit::Expr("r.session_id".into()))
        );
        assert_eq!(member(m, "chars"), Some(&Lit::Expr("`${x}`".into())));
        assert_eq!(member(m, "n"), Some(&Lit::Expr("f(1, {a: 2})".into())));
        assert_eq!(member(m, "session").and_then(Lit::as_id), None);
        // A cut source: what was read so far.
        let m = &calls_of(
            "tools.exec_command({cmd: \"sleep 6; echo done\", yield",
            "exec_command",
        )[0];
        assert_eq!(member(m, "cmd"), Some(&lit("sleep 6; echo done")));
        // Not a call of the tool: a longer name, or no object argument.
        assert!(calls_of("my_write_stdin({a: 1}); write_stdin(args)", "write_stdin").is_empty());
        assert_eq!(
            calls_of("tools[\"write_stdin\"]({a: 1})", "write_stdin").len(),
            1
        );
    }
}
