//! Shell quoting for command lines the NM hands to bash.
//!
//! The NM joins a launch context's commands into one line and runs it with `bash -c`, so any
//! argument carrying user text must be quoted to arrive as a single word, unchanged.

/// `s` as one bash word: wrapped in single quotes, each embedded `'` written as `'\''`.
/// Plain words made only of safe characters are left bare for readability in logs.
pub fn quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@+%".contains(&b));
    if safe {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn plain_words_stay_bare_and_others_are_single_quoted() {
        assert_eq!(quote("--num_containers"), "--num_containers");
        assert_eq!(quote("/usr/bin/weft"), "/usr/bin/weft");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("echo hi"), "'echo hi'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn bash_reads_quoted_words_back_unchanged() {
        let nasty = "a 'b' \"c\" $HOME `x` \\ ; | & * <LOG_DIR>\nline2";
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {}", quote(nasty)))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), nasty);
    }
}
