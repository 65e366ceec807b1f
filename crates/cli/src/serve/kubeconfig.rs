//! The kubeconfig `converge serve` writes: one cluster, one user per principal with its own
//! bearer token, one context per user (`converge-admin`, `converge-alice`, ...), `admin`
//! current. Tokens are random per start; the file is written with mode 0600.

use std::fmt::Write as _;

use base64::Engine as _;

/// The users a kubeconfig names, with their tokens.
pub fn render(server: &str, ca_pem: &str, users: &[(String, String)]) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let mut out = String::new();
    let _ = writeln!(out, "apiVersion: v1\nkind: Config\nclusters:\n- name: converge\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}");
    out.push_str("users:\n");
    for (user, token) in users {
        let _ = writeln!(out, "- name: {user}\n  user:\n    token: {token}");
    }
    out.push_str("contexts:\n");
    for (user, _) in users {
        let _ = writeln!(
            out,
            "- name: converge-{user}\n  context:\n    cluster: converge\n    user: {user}\n    namespace: default"
        );
    }
    let current = users.first().map_or("admin", |(u, _)| u.as_str());
    let _ = writeln!(out, "current-context: converge-{current}");
    out
}

/// A fresh random token (32 bytes, hex).
pub fn token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("cannot draw a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes the file, readable by its owner only (it holds credentials).
pub fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write the kubeconfig {}: {e}", path.display());
    std::fs::write(path, text).map_err(fail)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_context_per_user_and_admin_first() {
        let users = vec![
            ("admin".to_owned(), "t1".to_owned()),
            ("alice".to_owned(), "t2".to_owned()),
        ];
        let k = render("https://127.0.0.1:6443", "PEM", &users);
        assert!(k.contains("server: https://127.0.0.1:6443"));
        assert!(k.contains(
            "- name: converge-alice\n  context:\n    cluster: converge\n    user: alice"
        ));
        assert!(k.contains("current-context: converge-admin"));
        assert_eq!(token().map(|t| t.len()), Ok(64));
    }
}
