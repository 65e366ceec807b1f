//! What the playground's terminal asks of the runner: run a line against a copy of the shown
//! world and hand back the output and the writes it sent (the playground performs those on the
//! live world as its logged actions, so the timeline, the history and share links hold them
//! like any editor Apply), and Tab completion of verbs, resource types and object names.

use std::collections::BTreeMap;

use crate::api::ApiRequest;
use crate::engine::World;
use crate::rest::session::Session;

use super::client::Mapper;
use super::{run, Context, Output};

/// The user the terminal is logged in as: the served kubeconfig's current user.
pub const USER: &str = "admin";

/// A command's output and the writes it sent, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    pub output: Output,
    pub requests: Vec<ApiRequest>,
}

/// Runs `line` as [`USER`] on a copy of `world` (cheap: the world is persistent); `stdin` is
/// what `-f -` reads (the editor's text).
pub fn run_on(world: &World, stdin: Option<&str>, line: &str) -> Ran {
    let mut session = Session::new(world.clone());
    let files = BTreeMap::new();
    let ctx = Context {
        principal: USER,
        files: &files,
        stdin,
        clock_unix_ms: None,
    };
    let output = run(&mut session, ctx, line);
    Ran {
        output,
        requests: session.sent().to_vec(),
    }
}

/// The commands Tab completes.
pub const VERBS: &[&str] = &[
    "annotate", "apply", "auth", "create", "delete", "describe", "explain", "get", "label",
    "patch", "rollout", "scale",
];

/// The words that may complete the last word of `line`, sorted and without duplicates.
pub fn complete(world: &World, line: &str) -> Vec<String> {
    let ends_with_space = line.ends_with(' ');
    let words: Vec<&str> = line.split_whitespace().collect();
    let (done, partial): (&[&str], &str) = if ends_with_space || words.is_empty() {
        (&words[..], "")
    } else {
        (&words[..words.len() - 1], words[words.len() - 1])
    };
    let positional: Vec<&str> = done
        .iter()
        .skip(1)
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let mut out: Vec<String> = match (done.first(), positional.as_slice()) {
        (None, _) => vec!["kubectl".to_owned()],
        (Some(&"kubectl"), []) => VERBS.iter().map(|v| (*v).to_owned()).collect(),
        (Some(&"kubectl"), ["rollout"]) => {
            ["history", "pause", "restart", "resume", "status", "undo"]
                .iter()
                .map(|v| (*v).to_owned())
                .collect()
        }
        (Some(&"kubectl"), ["auth"]) => vec!["can-i".to_owned(), "whoami".to_owned()],
        (Some(&"kubectl"), [verb, rest @ ..]) => {
            let session = Session::new(world.clone());
            let mapper = Mapper::discover(&session);
            let typed = match (*verb, rest) {
                ("rollout", [_, t, ..]) | ("auth", [_, _, t, ..]) => Some(*t),
                ("rollout", [_]) | ("auth", [_, _]) => None,
                (_, [t, ..]) => Some(*t),
                (_, []) => None,
            };
            match typed {
                None if partial.contains('/') => names_for(world, &mapper, partial),
                None => resource_words(&mapper),
                Some(t) => match mapper.resolve(t) {
                    Ok(m) => {
                        let gr = crate::api::GroupResource::new(&m.group, &m.resource);
                        let ns = m.namespaced.then_some("default");
                        world
                            .objects_of(&gr, ns)
                            .map(|(k, _)| k.name.to_string())
                            .collect()
                    }
                    Err(_) => Vec::new(),
                },
            }
        }
        _ => Vec::new(),
    };
    out.retain(|w| w.starts_with(partial));
    out.sort();
    out.dedup();
    out
}

fn resource_words(mapper: &Mapper) -> Vec<String> {
    let mut out = Vec::new();
    for m in &mapper.mappings {
        out.push(m.resource.clone());
        out.extend(m.short_names.iter().cloned());
    }
    out
}

/// `deploy/we` completes to the names of that type: `deploy/web`.
fn names_for(world: &World, mapper: &Mapper, partial: &str) -> Vec<String> {
    let Some((t, _)) = partial.split_once('/') else {
        return Vec::new();
    };
    let Ok(m) = mapper.resolve(t) else {
        return Vec::new();
    };
    let gr = crate::api::GroupResource::new(&m.group, &m.resource);
    let ns = m.namespaced.then_some("default");
    world
        .objects_of(&gr, ns)
        .map(|(k, _)| format!("{t}/{}", k.name))
        .collect()
}

/// The longest common prefix of the candidates (what Tab fills in when several match).
pub fn common_prefix(candidates: &[String]) -> String {
    let Some(first) = candidates.first() else {
        return String::new();
    };
    let mut len = first.len();
    for c in &candidates[1..] {
        len = len.min(
            first
                .char_indices()
                .zip(c.chars())
                .take_while(|((_, a), b)| a == b)
                .map(|((i, a), _)| i + a.len_utf8())
                .last()
                .unwrap_or(0),
        );
    }
    first[..len].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ClusterConfig;

    fn world() -> World {
        let mut w = World::new(ClusterConfig::default());
        let r = run_on(
            &w,
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"),
            "kubectl apply -f -",
        );
        assert_eq!(r.output.stdout, "configmap/settings created\n");
        for req in r.requests {
            let _ = w.request(req);
        }
        w
    }

    #[test]
    fn a_write_comes_back_as_the_requests_it_sent() {
        let w = world();
        let r = run_on(&w, None, "kubectl get cm settings -o name");
        assert_eq!(r.output.stdout, "configmap/settings\n");
        assert!(r.requests.is_empty(), "a read sends no write");
        let r = run_on(&w, None, "kubectl --as app delete node node-1");
        assert_eq!(r.output.code, 1);
        assert!(
            r.output
                .stderr
                .starts_with("Error from server (Forbidden): "),
            "{}",
            r.output.stderr
        );
        assert_eq!(
            r.requests.len(),
            1,
            "the refused delete is still a request the cluster saw"
        );
    }

    #[test]
    fn tab_completes_verbs_types_and_names() {
        let w = world();
        assert_eq!(complete(&w, "kubectl sc"), ["scale"]);
        assert_eq!(complete(&w, "kubectl rollout st"), ["status"]);
        assert!(complete(&w, "kubectl get de").contains(&"deployments".to_owned()));
        assert_eq!(complete(&w, "kubectl get cm se"), ["settings"]);
        assert_eq!(complete(&w, "kubectl get cm/se"), ["cm/settings"]);
        assert_eq!(
            common_prefix(&["deploy".into(), "deployments".into()]),
            "deploy"
        );
    }

    #[test]
    fn a_watch_prints_a_row_per_change() {
        let mut w = world();
        let mut r = run_on(&w, None, "kubectl get cm -w");
        assert!(r.output.stdout.starts_with("NAME"), "{}", r.output.stdout);
        let mut watch = r.output.watch.take().expect("a watch");
        assert_eq!(watch.poll(&w), "");
        let r = run_on(&w, None, "kubectl label cm settings tier=web");
        for req in r.requests {
            let _ = w.request(req);
        }
        let rows = watch.poll(&w);
        assert!(rows.starts_with("settings "), "{rows:?}");
        assert_eq!(rows.lines().count(), 1);
        let r = run_on(&w, None, "kubectl delete cm settings");
        for req in r.requests {
            let _ = w.request(req);
        }
        assert_eq!(
            watch.poll(&w).lines().count(),
            1,
            "the deleted object's last row"
        );
        assert_eq!(watch.poll(&w), "");
    }
}
