//! The terminal pane's state: the typed line, the scrollback of commands with their output and
//! exit codes, the command history (Up/Down), Tab completion and an open `get -w`. Commands run
//! through core's kubectl runner (`converge_core::kubectl::terminal`) on the shown world; the
//! writes a command sends are performed on the live world as logged session actions, so they
//! appear in the timeline, the history and share links as an editor Apply does.
//!
//! The runner is in the build with the `terminal` feature only (crates/web/Cargo.toml). In the
//! first visit's build the toolbar's Terminal button saves the session and reloads the page into
//! the terminal's build ([`Effect::LoadTerminalBuild`]), which opens the pane at start.

#[cfg(feature = "terminal")]
use converge_core::engine::Input;
#[cfg(feature = "terminal")]
use converge_core::kubectl::terminal::{common_prefix, complete, run_on};
use converge_core::kubectl::watch::Watch;
use converge_core::view::session::SessionAction;

use super::{Effect, Model, Reaction};

/// Commands kept in the scrollback; older ones are dropped.
pub const ENTRIES_KEPT: usize = 200;
/// Lines kept of one command's output (a long `get -w`).
pub const LINES_KEPT: usize = 2_000;
/// Commands kept for Up/Down.
pub const HISTORY_KEPT: usize = 100;

/// One command and what it printed; `code` is `None` while a `-w` is still streaming.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

/// The terminal's messages (its own element's keys and the toolbar's toggle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalMsg {
    Toggle,
    Input(String),
    Submit,
    HistoryPrev,
    HistoryNext,
    Complete,
    /// Ctrl+C: stops a `-w`, or drops the typed line.
    Interrupt,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Terminal {
    pub open: bool,
    pub input: String,
    pub entries: Vec<Entry>,
    pub history: Vec<String>,
    /// Where Up/Down is in `history` (None: the line being typed).
    pub history_pos: Option<usize>,
    /// What Tab found when several words match.
    pub completions: Vec<String>,
    pub watch: Option<Box<Watch>>,
}

impl Terminal {
    /// A closed terminal whose Up/Down history holds the commands `actions` logged (a saved or
    /// shared session's writes from the terminal), oldest first, the newest [`HISTORY_KEPT`].
    pub fn from_log(actions: &[SessionAction]) -> Terminal {
        let mut history: Vec<String> = Vec::new();
        for line in actions.iter().filter_map(SessionAction::command) {
            // One command's several requests, or the same line typed again, are one entry, as
            // the live history keeps them.
            if history.last().map(String::as_str) != Some(line) {
                history.push(line.to_owned());
            }
        }
        let drop = history.len().saturating_sub(HISTORY_KEPT);
        history.drain(..drop);
        Terminal {
            history,
            ..Terminal::default()
        }
    }
}

/// `kubectl edit TYPE NAME` (or `TYPE/NAME`, with `-n`): the `kubectl get ... -o json` that reads
/// the object, or the refusal of a flag the terminal's edit does not take. `None`: not an edit.
#[cfg(feature = "terminal")]
fn edit_as_get(line: &str) -> Option<Result<String, String>> {
    let words = converge_core::kubectl::args::split_words(line).ok()?;
    let rest = words.strip_prefix(&["kubectl".to_owned()][..])?;
    let at = rest.iter().position(|w| !w.starts_with('-'))?;
    if rest[at] != "edit" {
        return None;
    }
    let mut get = vec!["kubectl".to_owned()];
    let mut args = rest[..at].iter().chain(&rest[at + 1..]);
    while let Some(w) = args.next() {
        let takes_value = matches!(w.as_str(), "-n" | "--namespace");
        let plain = !w.starts_with('-') || takes_value || w.starts_with("--namespace=");
        if !plain
            || w.chars()
                .any(|c| c.is_whitespace() || c == '\'' || c == '"')
        {
            return Some(Err(format!(
                "error: {w} is a kubectl edit flag this terminal does not simulate\n"
            )));
        }
        get.push(w.clone());
        if takes_value {
            get.extend(args.next().cloned());
        }
    }
    get.splice(1..1, ["get".to_owned()]);
    get.extend(["-o".to_owned(), "json".to_owned()]);
    Some(Ok(get.join(" ")))
}

#[cfg(feature = "terminal")]
fn keep_lines(s: &mut String) {
    let lines = s.lines().count();
    if lines > LINES_KEPT {
        let cut = s
            .match_indices('\n')
            .nth(lines - LINES_KEPT - 1)
            .map_or(0, |(i, _)| i + 1);
        s.replace_range(..cut, "");
    }
}

impl Model {
    /// The toolbar's Terminal button or `t`: opens or closes the pane, whose command line then
    /// takes focus.
    #[cfg(feature = "terminal")]
    pub(super) fn toggle_terminal(&mut self) -> Reaction {
        self.on_terminal(TerminalMsg::Toggle);
        let focus = self.terminal.open.then_some(Effect::FocusTerminal);
        Reaction {
            render: true,
            effects: focus.into_iter().collect(),
        }
    }

    /// The toolbar's Terminal button or `t` in the build without the terminal: stops playing,
    /// saves the session and reloads the page into the terminal's build, which opens the pane.
    #[cfg(not(feature = "terminal"))]
    pub(super) fn toggle_terminal(&mut self) -> Reaction {
        let mut effects = Vec::new();
        if std::mem::take(&mut self.playing) {
            effects.push(Effect::StopTicking);
        }
        effects.push(self.save());
        effects.push(Effect::LoadTerminalBuild);
        Reaction {
            render: true,
            effects,
        }
    }

    /// The build without the terminal draws no pane, so no terminal message but the toggle
    /// reaches it; a running watch cannot exist.
    #[cfg(not(feature = "terminal"))]
    pub(super) fn on_terminal(&mut self, _msg: TerminalMsg) -> bool {
        false
    }

    #[cfg(not(feature = "terminal"))]
    pub(super) fn follow_watch(&mut self) {}
}

#[cfg(feature = "terminal")]
impl Model {
    /// Applies a terminal message; whether anything changed.
    pub(super) fn on_terminal(&mut self, msg: TerminalMsg) -> bool {
        let t = &mut self.terminal;
        match msg {
            TerminalMsg::Toggle => t.open = !t.open,
            TerminalMsg::Input(s) => {
                t.input = s;
                t.history_pos = None;
                t.completions.clear();
            }
            TerminalMsg::HistoryPrev => {
                if t.history.is_empty() {
                    return false;
                }
                let pos = match t.history_pos {
                    None => t.history.len() - 1,
                    Some(p) => p.saturating_sub(1),
                };
                t.history_pos = Some(pos);
                t.input = t.history[pos].clone();
            }
            TerminalMsg::HistoryNext => match t.history_pos {
                None => return false,
                Some(p) if p + 1 < t.history.len() => {
                    t.history_pos = Some(p + 1);
                    t.input = t.history[p + 1].clone();
                }
                Some(_) => {
                    t.history_pos = None;
                    t.input.clear();
                }
            },
            TerminalMsg::Complete => {
                let found = complete(self.shown(), &self.terminal.input);
                let t = &mut self.terminal;
                let partial_start = if t.input.ends_with(' ') {
                    t.input.len()
                } else {
                    t.input.rfind(' ').map_or(0, |i| i + 1)
                };
                match found.as_slice() {
                    [] => t.completions.clear(),
                    [one] => {
                        t.input.replace_range(partial_start.., one);
                        t.input.push(' ');
                        t.completions.clear();
                    }
                    several => {
                        let prefix = common_prefix(several);
                        t.input.replace_range(partial_start.., &prefix);
                        t.completions = several.to_vec();
                    }
                }
            }
            TerminalMsg::Interrupt => {
                if t.watch.take().is_some() {
                    if let Some(e) = t.entries.last_mut() {
                        e.stdout.push_str("^C\n");
                        e.code = Some(130);
                    }
                } else if !t.input.is_empty() {
                    t.entries.push(Entry {
                        command: std::mem::take(&mut t.input),
                        stdout: "^C\n".into(),
                        stderr: String::new(),
                        code: Some(130),
                    });
                } else {
                    return false;
                }
            }
            TerminalMsg::Submit => self.submit(),
        }
        true
    }

    fn submit(&mut self) {
        let line = std::mem::take(&mut self.terminal.input).trim().to_owned();
        self.terminal.history_pos = None;
        self.terminal.completions.clear();
        if line.is_empty() {
            return;
        }
        if self.terminal.history.last() != Some(&line) {
            self.terminal.history.push(line.clone());
            if self.terminal.history.len() > HISTORY_KEPT {
                self.terminal.history.remove(0);
            }
        }
        // A new command ends a running watch, as typing into a shell after Ctrl+C would.
        if self.terminal.watch.take().is_some() {
            if let Some(e) = self.terminal.entries.last_mut() {
                e.code = Some(130);
            }
        }
        if line == "clear" {
            self.terminal.entries.clear();
            return;
        }
        if let Some(edit) = edit_as_get(&line) {
            self.edit(line, edit);
            return;
        }
        if self.cursor.is_some() {
            self.fork();
        }
        let ran = run_on(&self.world, Some(&self.editor_text), &line);
        for request in ran.requests {
            self.perform(SessionAction::Apply {
                input: Input::Request { request },
                command: Some(line.clone()),
            });
        }
        let mut output = ran.output;
        let watch = output.watch.take();
        self.terminal.entries.push(Entry {
            command: line,
            stdout: output.stdout,
            stderr: output.stderr,
            code: if watch.is_some() {
                None
            } else {
                Some(output.code)
            },
        });
        self.terminal.watch = watch;
        if self.terminal.entries.len() > ENTRIES_KEPT {
            self.terminal.entries.remove(0);
        }
    }

    /// `kubectl edit`: the playground's editor is the terminal's `$EDITOR`. The object (read as
    /// `kubectl get ... -o json` would read it, so a missing one gets kubectl's NotFound) opens
    /// in the editor, where Apply sends it back as a PUT, as kubectl edit's save does.
    fn edit(&mut self, line: String, get: Result<String, String>) {
        let entry = |stdout: String, stderr: String, code| Entry {
            command: line.clone(),
            stdout,
            stderr,
            code: Some(code),
        };
        let get = match get {
            Ok(get) => get,
            Err(e) => {
                self.terminal.entries.push(entry(String::new(), e, 1));
                return;
            }
        };
        let ran = run_on(self.shown(), None, &get);
        if ran.output.code != 0 {
            let out = ran.output;
            self.terminal
                .entries
                .push(entry(out.stdout, out.stderr, out.code));
            return;
        }
        let key = serde_json::from_str::<converge_core::json::Value>(&ran.output.stdout)
            .ok()
            .and_then(|obj| {
                let obj = match obj.get("items").and_then(|i| i.as_array()) {
                    Some(items) if items.len() == 1 => items[0].clone(),
                    Some(_) => return None,
                    None => obj,
                };
                let api_version = obj.get("apiVersion")?.as_str()?;
                let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let kind = obj.get("kind")?.as_str()?;
                let gr = self
                    .shown()
                    .api()
                    .resources()
                    .find(|r| r.kind == kind && r.gr.group == group)?
                    .gr
                    .clone();
                let meta = obj.get("metadata")?;
                let ns = meta.get("namespace").and_then(|n| n.as_str()).unwrap_or("");
                let name = meta.get("name")?.as_str()?;
                // As kubectl names an object in its messages: `deployment.apps/web`.
                let dot = if group.is_empty() { "" } else { "." };
                let shown = format!("{}{dot}{group}/{name}", kind.to_lowercase());
                Some((converge_core::api::ObjectKey::new(gr, ns, name), shown))
            });
        let Some((key, shown)) = key else {
            let e = "error: kubectl edit in this terminal opens one object in the editor: name it \
                     (kubectl edit TYPE NAME)\n";
            self.terminal
                .entries
                .push(entry(String::new(), e.into(), 1));
            return;
        };
        self.load(Some(key));
        self.terminal.entries.push(entry(
            format!("Editing {shown} in the editor: change it there and press Apply.\n"),
            String::new(),
            0,
        ));
    }

    /// After the live world moved: a running `get -w` prints its new rows.
    pub(super) fn follow_watch(&mut self) {
        if self.cursor.is_some() {
            return;
        }
        let Some(watch) = self.terminal.watch.as_mut() else {
            return;
        };
        let rows = watch.poll(&self.world);
        let finished = watch.finished;
        if let Some(e) = self.terminal.entries.last_mut() {
            if rows.starts_with("error: ") {
                e.stderr.push_str(&rows);
            } else {
                e.stdout.push_str(&rows);
                keep_lines(&mut e.stdout);
            }
            if finished.is_some() {
                e.code = finished;
            }
        }
        if finished.is_some() {
            self.terminal.watch = None;
        }
    }
}

#[cfg(all(test, not(feature = "terminal")))]
mod lean_tests {
    use super::*;

    #[test]
    fn the_button_saves_the_session_and_asks_for_the_terminals_build() {
        let mut m = Model {
            playing: true,
            ..Model::default()
        };
        let r = m.toggle_terminal();
        assert!(!m.playing, "playing stops before the page reloads");
        assert!(!m.terminal.open);
        assert_eq!(r.effects[0], Effect::StopTicking);
        assert!(matches!(r.effects[1], Effect::SaveWorkspace { .. }));
        assert_eq!(r.effects[2], Effect::LoadTerminalBuild);
    }
}

#[cfg(all(test, feature = "terminal"))]
mod tests {
    use super::*;

    fn typed(m: &mut Model, line: &str) {
        m.on_terminal(TerminalMsg::Input(line.into()));
        m.on_terminal(TerminalMsg::Submit);
    }

    #[test]
    fn a_command_prints_and_its_writes_are_logged_actions() {
        let mut m = Model::default();
        let before = m.actions.len();
        typed(&mut m, "kubectl scale deploy web --replicas=5");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(e.stdout, "deployment.apps/web scaled\n");
        assert_eq!(e.code, Some(0));
        assert_eq!(
            m.actions.len(),
            before + 1,
            "the PATCH of /scale is one action"
        );
        typed(&mut m, "kubectl --as app patch deploy web --subresource=status --type=merge -p '{\"status\":{}}'");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(e.code, Some(1));
        assert!(e.stderr.contains("(Forbidden)"), "{}", e.stderr);
        typed(&mut m, "clear");
        assert!(m.terminal.entries.is_empty());
        m.on_terminal(TerminalMsg::HistoryPrev);
        assert_eq!(m.terminal.input, "clear");
        m.on_terminal(TerminalMsg::HistoryPrev);
        assert!(m.terminal.input.starts_with("kubectl --as app"));
        m.on_terminal(TerminalMsg::HistoryPrev);
        assert_eq!(m.terminal.input, "kubectl scale deploy web --replicas=5");
        for _ in 0..3 {
            m.on_terminal(TerminalMsg::HistoryNext);
        }
        assert_eq!(m.terminal.input, "");
    }

    #[test]
    fn tab_completes_and_a_watch_follows_the_world_until_ctrl_c() {
        let mut m = Model::default();
        m.on_terminal(TerminalMsg::Input("kubectl ro".into()));
        m.on_terminal(TerminalMsg::Complete);
        assert_eq!(m.terminal.input, "kubectl rollout ");
        typed(&mut m, "kubectl get deploy -w");
        assert!(m.terminal.watch.is_some());
        assert_eq!(m.terminal.entries.last().unwrap().code, None);
        typed(&mut m, "kubectl scale deploy web --replicas=2");
        assert!(m.terminal.watch.is_none(), "a new command ends the watch");
        typed(&mut m, "kubectl get deploy -w");
        let lines = m.terminal.entries.last().unwrap().stdout.lines().count();
        m.perform(SessionAction::RunUntilConverged);
        m.follow_watch();
        assert!(m.terminal.entries.last().unwrap().stdout.lines().count() > lines);
        m.on_terminal(TerminalMsg::Interrupt);
        assert!(m.terminal.watch.is_none());
        assert_eq!(m.terminal.entries.last().unwrap().code, Some(130));
    }

    #[test]
    fn kubectl_edit_opens_the_object_in_the_editor() {
        let mut m = Model::default();
        typed(&mut m, "kubectl edit deploy web");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(
            e.stdout,
            "Editing deployment.apps/web in the editor: change it there and press Apply.\n"
        );
        assert_eq!(e.code, Some(0));
        assert_eq!(m.selected.as_ref().map(|k| k.name.as_str()), Some("web"));
        assert!(
            m.editor_text.contains("\"kind\": \"Deployment\""),
            "{}",
            m.editor_text
        );
        typed(&mut m, "kubectl edit -n kube-system deploy/nope");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(
            e.stderr,
            "Error from server (NotFound): deployments.apps \"nope\" not found\n"
        );
        assert_eq!(e.code, Some(1));
        typed(&mut m, "kubectl edit pods");
        let e = m.terminal.entries.last().unwrap();
        assert!(e
            .stderr
            .starts_with("error: kubectl edit in this terminal opens one object"));
        typed(&mut m, "kubectl edit deploy web --output-patch");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(
            e.stderr,
            "error: --output-patch is a kubectl edit flag this terminal does not simulate\n"
        );
    }

    #[test]
    fn rollout_status_keeps_waiting_until_the_rollout_is_done() {
        let mut m = Model::default();
        typed(&mut m, "kubectl scale deploy web --replicas=4");
        typed(&mut m, "kubectl rollout status deploy/web");
        let e = m.terminal.entries.last().unwrap();
        assert_eq!(
            e.stdout,
            "Waiting for deployment spec update to be observed...\n"
        );
        assert_eq!(e.code, None, "still waiting");
        m.perform(SessionAction::RunUntilConverged);
        m.follow_watch();
        let e = m.terminal.entries.last().unwrap();
        assert!(
            e.stdout
                .ends_with("deployment \"web\" successfully rolled out\n"),
            "{}",
            e.stdout
        );
        assert_eq!(e.code, Some(0));
        assert!(m.terminal.watch.is_none());
    }

    #[test]
    fn a_share_link_carries_each_command_to_its_cards_and_the_history() {
        let scale = "kubectl scale deploy web --replicas=5";
        let delete = "kubectl delete pods -l app=web";
        let mut m = Model::default();
        typed(&mut m, "kubectl label deploy web tier=front");
        typed(&mut m, scale);
        typed(&mut m, "kubectl get deploy");
        typed(&mut m, delete);
        m.perform(SessionAction::Step);
        let sent_by = |m: &Model, line: &str| -> Vec<String> {
            m.timeline_lanes()
                .iter()
                .flat_map(|l| l.entries.iter())
                .filter(|e| e.command.as_deref() == Some(line))
                .map(|e| e.label.clone())
                .collect()
        };
        assert_eq!(sent_by(&m, delete).len(), 3, "a DELETE of each Pod");
        assert_eq!(
            sent_by(&m, scale),
            ["patch deployments/scale default/web 200"]
        );
        let link = crate::persist::to_hash(&m.workspace());
        let (opened, _) = Model::boot(&super::super::StartingPage {
            search: String::new(),
            hash: link,
            storage: None,
            gallery: None,
            checkpoint: Default::default(),
            checkpoint_shipped: false,
        });
        assert_eq!(opened.actions, m.actions);
        assert_eq!(sent_by(&opened, scale), sent_by(&m, scale));
        assert_eq!(sent_by(&opened, delete), sent_by(&m, delete));
        assert_eq!(
            opened.terminal.history,
            ["kubectl label deploy web tier=front", scale, delete],
            "reads are not logged, so `get` is not in the link"
        );
        assert!(
            opened.terminal.entries.is_empty(),
            "the scrollback is the tab's"
        );
    }
}
