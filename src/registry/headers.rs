//! The two headers the tags listing turns on: the `WWW-Authenticate: Bearer ...` challenge of
//! a registry that wants a token (the Docker token flow the distribution spec defers to), and
//! the `Link: <...>; rel="next"` of a paginated listing (opencontainers/distribution-spec
//! spec.md, "Listing Tags"; RFC 8288 for the header's shape).

/// Where to ask for a token, from a 401's `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerChallenge {
    pub realm: String,
    pub service: Option<String>,
    pub scope: Option<String>,
}

/// Reads `Bearer realm="...",service="...",scope="..."`; `None` for another scheme or when
/// no realm is named.
pub fn bearer_challenge(header: &str) -> Option<BearerChallenge> {
    let header = header.trim();
    let (scheme, params) = header.split_once(char::is_whitespace)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let params = auth_params(params);
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone())
    };
    Some(BearerChallenge {
        realm: get("realm").filter(|r| !r.is_empty())?,
        service: get("service"),
        scope: get("scope"),
    })
}

/// `key="value"` or `key=token` pairs separated by commas; a quoted value may hold commas
/// (a scope naming two actions: `repository:x:pull,push`) and backslash escapes.
fn auth_params(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars
            .by_ref()
            .take_while(|c| *c != '=')
            .collect::<String>()
            .trim()
            .to_string();
        if key.is_empty() {
            return out;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                value.push(c);
            }
            value = value.trim().to_string();
        }
        out.push((key, value));
    }
}

/// The target of the `rel="next"` link of a `Link` header, as written (often a path relative
/// to the registry: `</v2/name/tags/list?n=100&last=v1.2.3>; rel="next"`).
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|link| {
        let (target, params) = link.trim().split_once(';')?;
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        let is_next = params.split(';').any(|p| {
            p.trim()
                .split_once('=')
                .is_some_and(|(k, v)| k.trim() == "rel" && v.trim().trim_matches('"') == "next")
        });
        is_next.then(|| target.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ghcr_challenge() {
        let c = bearer_challenge(
            r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:siderolabs/installer:pull""#,
        )
        .unwrap();
        assert_eq!(c.realm, "https://ghcr.io/token");
        assert_eq!(c.service.as_deref(), Some("ghcr.io"));
        assert_eq!(
            c.scope.as_deref(),
            Some("repository:siderolabs/installer:pull")
        );
    }

    #[test]
    fn quoted_commas_escapes_and_bare_tokens() {
        let c = bearer_challenge(
            r#"bearer realm=http://127.0.0.1:1/t, scope="repository:a/b:pull,push", service="x\"y""#,
        )
        .unwrap();
        assert_eq!(c.realm, "http://127.0.0.1:1/t");
        assert_eq!(c.scope.as_deref(), Some("repository:a/b:pull,push"));
        assert_eq!(c.service.as_deref(), Some("x\"y"));
    }

    #[test]
    fn other_schemes_and_missing_realms_are_not_challenges() {
        assert_eq!(bearer_challenge(r#"Basic realm="registry""#), None);
        assert_eq!(bearer_challenge(r#"Bearer service="ghcr.io""#), None);
        assert_eq!(bearer_challenge("Bearer"), None);
        assert_eq!(bearer_challenge(""), None);
    }

    #[test]
    fn finds_the_next_link_among_others() {
        assert_eq!(
            next_link(r#"</v2/siderolabs/installer/tags/list?n=2&last=v1.0.1>; rel="next""#)
                .as_deref(),
            Some("/v2/siderolabs/installer/tags/list?n=2&last=v1.0.1")
        );
        assert_eq!(
            next_link(r#"<https://x/a>; rel="prev", <https://x/b>; rel=next"#).as_deref(),
            Some("https://x/b")
        );
        assert_eq!(next_link(r#"<https://x/a>; rel="prev""#), None);
        assert_eq!(next_link("garbage"), None);
    }
}
