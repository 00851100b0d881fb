//! The run's warnings (`analysis::warnings`) as printed on stderr after
//! the page.

use crate::analysis::warnings::Warning;

/// The warnings as printed on stderr after the page, a line each, `warning:`
/// first (in bold yellow with `colour`): the compact [`Warning::line`], or
/// with `long` the whole message; a line already printed is not repeated.
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
        let line = if long { w.to_string() } else { w.line() };
        if !seen.contains(&line) {
            out.push_str(&format!("{style}warning:{style:#} {line}\n"));
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
        let vm = Warning::Virtualized {
            hypervisor: "kvm".into(),
        };
        let other = Warning::Virtualized {
            hypervisor: "xen".into(),
        };
        let page = render(&[vm.clone(), vm.clone(), other], false, false);
        assert_eq!(page.lines().count(), 2, "{page}");
        assert!(page.lines().all(|l| l.starts_with("warning: ")), "{page}");
        let long = render(std::slice::from_ref(&vm), true, false);
        assert_eq!(long, format!("warning: {vm}\n"));
        assert!(render(&[vm], false, true).contains('\u{1b}'));
    }
}
