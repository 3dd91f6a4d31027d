//! Names cut to a width so that rows stay told apart: the part a name shares with its most
//! similar neighbour goes before the part that differs. Pure.

/// A name cut to `width` columns so that what tells it apart from the names beside it
/// stays: the first `shared` characters are what it shares with the most similar other
/// name ([`shared_prefixes`]); when the rest fits, the start fills what is left before an
/// ellipsis (`capi-w…qqqqq`); when it does not, or the name shares nothing, it is cut in
/// the middle (`root@vm/…5116172`). Every table's names,
/// the CAPI tree and the Lease holder are cut by it; other text is cut at its end (`views::fit`).
pub fn fit_apart(text: &str, width: usize, ellipsis: &str, shared: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if text.width() <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(ellipsis.width());
    if room == 0 {
        return super::fit(text, width, ellipsis);
    }
    let split = text
        .char_indices()
        .nth(shared)
        .map_or(text.len(), |(i, _)| i);
    let distinct = &text[split..];
    if shared > 0 && distinct.width() < room {
        let head = take_width(text, room - distinct.width());
        return format!("{head}{ellipsis}{distinct}");
    }
    let tail_width = room / 2;
    let head = take_width(text, room - tail_width);
    let mut used = 0;
    let tail = (text.char_indices().rev())
        .take_while(|(_, c)| {
            used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            used <= tail_width
        })
        .last()
        .map_or("", |(i, _)| &text[i..]);
    format!("{head}{ellipsis}{tail}")
}

/// A table's name cut to `width` as [`fit_apart`] cuts it, but for its head up to the first
/// `/` (a tree's guide and a Kubernetes object's kind: `├─ Machine/`), kept whole while four
/// columns are left for the rest, so the rows still say what each object is.
pub fn fit_kind_apart(text: &str, width: usize, ellipsis: &str, shared: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let Some(slash) = text.find('/').filter(|_| text.width() > width) else {
        return fit_apart(text, width, ellipsis, shared);
    };
    let (head, rest) = text.split_at(slash + 1);
    if head.width() + 4 > width {
        return fit_apart(text, width, ellipsis, shared);
    }
    let kept = head.chars().count();
    let rest = fit_apart(
        rest,
        width - head.width(),
        ellipsis,
        shared.saturating_sub(kept),
    );
    format!("{head}{rest}")
}

/// The longest start of `text` at most `width` columns wide.
pub(super) fn take_width(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            return &text[..i];
        }
        used += w;
    }
    text
}

/// For each of `names`, how many characters it shares at its start with the most similar
/// other name, up to a separator (`-`, `/`, `.`, `_`, `@`, `:`), so `capi-work-cp-` is
/// shared but `Machine` of `MachineSet` is not; 0 for a name alone. What [`fit_apart`] may
/// drop. Sorted neighbours are the most similar, so this costs a sort, not a comparison of
/// every pair.
pub fn shared_prefixes(names: &[&str]) -> Vec<usize> {
    let common = |a: &str, b: &str| {
        let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y);
        same.enumerate()
            .filter(|(_, (c, _))| matches!(c, '-' | '/' | '.' | '_' | '@' | ':'))
            .last()
            .map_or(0, |(i, _)| i + 1)
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|a, b| names[*a].cmp(names[*b]));
    let mut shared = vec![0; names.len()];
    for pair in order.windows(2) {
        let n = common(names[pair[0]], names[pair[1]]);
        shared[pair[0]] = shared[pair[0]].max(n);
        shared[pair[1]] = shared[pair[1]].max(n);
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_what_tells_them_apart() {
        let names = [
            "capi-work-cp-ppppp",
            "capi-work-cp-qqqqq",
            "capi-work-cp-sssss",
            "capi-work-md-0-x7k2p",
        ];
        let shared = shared_prefixes(&names);
        assert_eq!(shared, vec![13, 13, 13, 10]);
        let cut: Vec<String> = (names.iter().zip(&shared))
            .map(|(n, s)| fit_apart(n, 12, "…", *s))
            .collect();
        assert_eq!(
            cut,
            [
                "capi-w…ppppp",
                "capi-w…qqqqq",
                "capi-w…sssss",
                "c…md-0-x7k2p"
            ]
        );
        // A name that fits is whole; one that shares nothing is cut in the middle.
        assert_eq!(fit_apart("cp-1", 12, "…", 3), "cp-1");
        assert_eq!(
            fit_apart("root@vm/12252-17965116172", 16, "…", 0),
            "root@vm/…5116172"
        );
        // The distinct part too long: cut in the middle.
        assert_eq!(
            fit_apart("Machine/capi-work-cp-0123456789abcdef", 12, "...", 21),
            "Machi...cdef"
        );
        assert_eq!(fit_apart("abcdef", 1, "…", 0), "…");
        // A kind stays whole before the name cut apart; too narrow for it, as fit_apart.
        assert_eq!(
            fit_kind_apart("├─ Machine/capi-work-cp-ppppp", 20, "…", 24),
            "├─ Machine/cap…ppppp"
        );
        assert_eq!(
            fit_kind_apart("MachineDeployment/capi-work-md-0", 12, "…", 0),
            "Machin…-md-0"
        );
    }

    #[test]
    fn a_name_alone_shares_nothing() {
        assert_eq!(shared_prefixes(&["cp-1"]), vec![0]);
        assert_eq!(shared_prefixes(&[]), Vec::<usize>::new());
        assert_eq!(shared_prefixes(&["w-1", "cp-1", "w-10"]), vec![2, 0, 2]);
        // Only up to a separator: `Machine` of `MachineSet` is a word of its own.
        assert_eq!(
            shared_prefixes(&["Machine/a-1", "MachineSet/a", "Machine/a-2"]),
            vec![10, 0, 10]
        );
    }
}
