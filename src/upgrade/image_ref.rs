//! Whether an installer image (`--image`, the plan screen's `i`) is an image reference at all,
//! by the grammar the node's pull parses it with (distribution/reference v0.5.0 `reference.go`,
//! through containerd's `ParseDockerRef`): `[domain/]path[:tag][@digest]`.

/// The longest repository name (domain and path) distribution/reference accepts.
const NAME_TOTAL_LENGTH_MAX: usize = 255;

/// Why `image` is not an image reference; `Ok` when it is one.
pub fn check_image_reference(image: &str) -> Result<(), String> {
    if image.is_empty() {
        return Err("it is empty".into());
    }
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        check_digest(digest)?;
    }
    // A tag follows the last ':' after the last '/' (an earlier ':' is the registry's port).
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(tag) = tag {
        check_tag(tag)?;
    }
    check_name(name)
}

fn check_name(name: &str) -> Result<(), String> {
    if name.len() > NAME_TOTAL_LENGTH_MAX {
        return Err(format!(
            "the repository name is longer than {NAME_TOTAL_LENGTH_MAX} characters"
        ));
    }
    let (domain, path) = split_domain(name);
    if let Some(domain) = domain {
        check_domain(domain)?;
    }
    if path.is_empty() {
        return Err("it names no repository".into());
    }
    if path.chars().any(|c| c.is_ascii_uppercase()) {
        return Err("the repository name must be lowercase".into());
    }
    for component in path.split('/') {
        if !is_path_component(component) {
            return Err(format!(
                "{component:?} is not a repository path component (lowercase letters and digits, joined by '.', '_', '__' or '-')"
            ));
        }
    }
    Ok(())
}

/// The registry part, when the first component is one: it has a '.' or a ':', is
/// `localhost`, or is not all lowercase (distribution/reference's `splitDockerDomain`).
fn split_domain(name: &str) -> (Option<&str>, &str) {
    match name.split_once('/') {
        Some((first, path))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.chars().any(|c| c.is_ascii_uppercase()) =>
        {
            (Some(first), path)
        }
        _ => (None, name),
    }
}

fn check_domain(domain: &str) -> Result<(), String> {
    let bad = || format!("{domain:?} is not a registry host[:port]");
    let (host, port) = if let Some(v6) = domain.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or_else(bad)?;
        addr.parse::<std::net::Ipv6Addr>().map_err(|_| bad())?;
        let port = match after {
            "" => None,
            after => Some(after.strip_prefix(':').ok_or_else(bad)?),
        };
        (None, port)
    } else {
        match domain.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(domain), None),
        }
    };
    let host_ok = host.is_none_or(|h| h.split('.').all(is_domain_component));
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// `[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`
fn is_domain_component(c: &str) -> bool {
    !c.is_empty()
        && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !c.starts_with('-')
        && !c.ends_with('-')
}

/// `[a-z0-9]+ ([_.]|__|[-]+ [a-z0-9]+)*`
fn is_path_component(c: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = c.as_bytes();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &c[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// `[\w][\w.-]{0,127}`
fn check_tag(tag: &str) -> Result<(), String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let ok = tag.len() <= 128
        && tag.bytes().next().is_some_and(word)
        && tag.bytes().all(|b| word(b) || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{tag:?} is not a tag (up to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-')"
        ))
    }
}

/// `algorithm ":" hex{32,}`, the algorithm `[A-Za-z][A-Za-z0-9]*` parts joined by `[+._-]`.
fn check_digest(digest: &str) -> Result<(), String> {
    let bad = || format!("{digest:?} is not a digest (algorithm:hex, e.g. sha256:<64 hex digits>)");
    let (algorithm, hex) = digest.split_once(':').ok_or_else(bad)?;
    let algorithm_ok = algorithm.split(['+', '.', '_', '-']).all(|part| {
        part.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && part.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    if algorithm_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installer_images_people_use_are_references() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for image in [
            "ghcr.io/siderolabs/installer:v1.12.0",
            "factory.talos.dev/installer/376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:v1.12.0",
            "registry.local:5000/installer:v1.12.0",
            "localhost/installer",
            "installer",
            "[::1]:5000/talos/installer:v1.12.0-beta.1",
            &format!("ghcr.io/siderolabs/installer@{digest}"),
            &format!("ghcr.io/siderolabs/installer:v1.12.0@{digest}"),
            "my-registry.example/a__b/c-d--e/f.g:TAG_1",
        ] {
            assert_eq!(check_image_reference(image), Ok(()), "{image}");
        }
    }

    #[test]
    fn garbage_is_refused_with_the_reason() {
        for (image, why) in [
            ("", "empty"),
            ("ghcr.io/siderolabs/Installer:v1", "must be lowercase"),
            ("ghcr.io/siderolabs/installer:v1 2", "not a tag"),
            ("ghcr.io/siderolabs/installer:.v1", "not a tag"),
            ("ghcr.io/siderolabs/installer:", "not a tag"),
            ("ghcr.io/siderolabs/installer@sha256:abcd", "not a digest"),
            ("ghcr.io//installer", "not a repository path component"),
            ("-bad.io/installer", "not a registry"),
            ("registry:port/installer", "not a registry"),
            ("ghcr.io/", "names no repository"),
            ("!!!", "not a repository path component"),
            ("ghcr.io/siderolabs/installer:v1\u{1b}[31m", "not a tag"),
        ] {
            let err = check_image_reference(image).expect_err(image);
            assert!(err.contains(why), "{image:?}: {err}");
        }
        let long = format!("ghcr.io/{}", "a".repeat(250));
        assert!(
            check_image_reference(&long)
                .unwrap_err()
                .contains("longer than 255")
        );
    }
}
