//! The run's warnings (`analysis::warnings`) as printed on stderr after
//! the page.

use crate::analysis::warnings::Warning;

/// The warnings as printed on stderr after the page, a line each, `warning:`
/// first (in bold yellow with `colour`): the compact [`Warning::line`], or
/// with `long` the whole message; a line already printed is not repeated.
/// A condition of the machine the user cannot change ([`Warning::printed`]
/// false) is left out, or with `long` given as a `note:`.
pub fn render(warnings: &[Warning], long: bool, colour: bool) -> String {
    let style = if colour {
        anstyle::Style::new()
            .bold()
            .fg_color(Some(anstyle::AnsiColor::Yellow.into()))
    } else {
        anstyle::Style::new()
    };
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for w in warnings {
        if !long && !w.printed() {
            continue;
        }
        let line = if long { w.to_string() } else { w.line() };
        if !seen.contains(&line) {
            if w.printed() {
                out.push_str(&format!("{style}warning:{style:#} {line}\n"));
            } else {
                out.push_str(&format!("note: {line}\n"));
            }
            seen.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_warning_is_one_line_once_and_long_gives_the_whole_message() {
        let load = Warning::OtherLoad { busy_percent: 40.0 };
        let other = Warning::OtherLoad { busy_percent: 80.0 };
        let page = render(&[load.clone(), load.clone(), other], false, false);
        assert_eq!(page.lines().count(), 2, "{page}");
        assert!(page.lines().all(|l| l.starts_with("warning: ")), "{page}");
        let long = render(std::slice::from_ref(&load), true, false);
        assert_eq!(long, format!("warning: {load}\n"));
        assert!(render(&[load], false, true).contains('\u{1b}'));
    }

    #[test]
    fn a_condition_the_user_cannot_change_is_a_note_of_long_only() {
        let vm = Warning::Virtualized {
            hypervisor: "kvm".into(),
        };
        assert_eq!(render(std::slice::from_ref(&vm), false, false), "");
        assert_eq!(
            render(std::slice::from_ref(&vm), true, true),
            format!("note: {vm}\n")
        );
    }
}
