//! `$(VAR)` references in commands, args, env values and `subPathExpr`, expanded the way
//! Kubernetes defines them: `$$` is a literal `$`, and an unknown or unterminated reference
//! stays as written.

/// `text` with each `$(NAME)` replaced by `lookup(NAME)` when that gives a value.
pub fn expand<'a>(text: &str, lookup: impl Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some((name, tail)) = after
            .strip_prefix('(')
            .and_then(|inner| inner.split_once(')'))
        {
            match lookup(name) {
                Some(value) => out.push_str(value),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> String {
        expand(text, |name| match name {
            "A" => Some("alpha"),
            "EMPTY" => Some(""),
            _ => None,
        })
    }

    #[test]
    fn references_escapes_and_unknowns() {
        assert_eq!(run("x $(A) y"), "x alpha y");
        assert_eq!(run("$(A)$(A)"), "alphaalpha");
        assert_eq!(run("[$(EMPTY)]"), "[]");
        assert_eq!(run("$$(A)"), "$(A)");
        assert_eq!(run("$$$(A)"), "$alpha");
        assert_eq!(run("$(B) stays"), "$(B) stays");
        assert_eq!(run("$A and $"), "$A and $");
        assert_eq!(run("open $(A"), "open $(A");
        assert_eq!(run("$()"), "$()");
        assert_eq!(run("héllo $(A)é"), "héllo alphaé");
    }
}
