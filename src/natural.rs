//! The natural order of names and sizes: runs of digits compare as numbers
//! (`w-2` before `w-10`). Tables sort by it, and plans order their nodes by
//! it, so every list of nodes reads the same way everywhere.
use std::cmp::Ordering;

fn trim_zeros(s: &[u8]) -> &[u8] {
    let zeros = s.iter().take_while(|c| **c == b'0').count();
    &s[zeros..]
}

/// Compares text with runs of digits as numbers, so `w-2` < `w-10` and
/// `9.5 MiB` < `10.0 MiB`; empty (unknown) sorts last.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    // Bytes, not chars: UTF-8 byte order is code point order, and no
    // allocation happens in a sort of thousands of rows.
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    let digits = |s: &[u8], mut k: usize| {
        while k < s.len() && s[k].is_ascii_digit() {
            k += 1;
        }
        k
    };
    while i < x.len() && j < y.len() {
        let order = if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let (ei, ej) = (digits(x, i), digits(y, j));
            let (m, n) = (trim_zeros(&x[i..ei]), trim_zeros(&y[j..ej]));
            (i, j) = (ei, ej);
            m.len().cmp(&n.len()).then_with(|| m.cmp(n))
        } else {
            let order = x[i]
                .to_ascii_lowercase()
                .cmp(&y[j].to_ascii_lowercase())
                .then(x[i].cmp(&y[j]));
            (i, j) = (i + 1, j + 1);
            order
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    (x.len() - i).cmp(&(y.len() - j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_numbers_as_numbers_and_unknown_last() {
        assert_eq!(natural_cmp("w-2", "w-10"), Ordering::Less);
        assert_eq!(natural_cmp("9.5 MiB", "10.0 MiB"), Ordering::Less);
        assert_eq!(natural_cmp("", "a"), Ordering::Greater);
    }
}
