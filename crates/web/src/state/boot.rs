//! Where a session starts from: the embed URL, `?scenario=<id>`, a share link, the saved
//! workspace, else a fresh one, each with a notice when something could not be read. The
//! platform reads the page (address and storage) into a [`StartingPage`]; the decisions are
//! here, natively testable.

use std::rc::Rc;

use converge_core::view::session::Starter;

use super::embed::{self, EmbedConfig};
use super::lesson::Lessons;
use super::{gallery, Effect, Model, PageState, Workspace};
use crate::persist;

/// Reads one localStorage item by key.
pub type StorageReader<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What the page holds when the app starts.
pub struct StartingPage<'a> {
    /// `location.search`, with its `?`.
    pub search: String,
    /// `location.hash`, with its `#`.
    pub hash: String,
    /// Reads one localStorage item; None when the browser offers no storage.
    pub storage: Option<StorageReader<'a>>,
}

impl StartingPage<'_> {
    fn stored(&self, key: &str) -> Option<String> {
        self.storage.and_then(|read| read(key))
    }
}

impl Model {
    /// The session the page opens with, and the effects that set the page up (the theme).
    pub fn boot(page: &StartingPage<'_>) -> (Model, Vec<Effect>) {
        let (embed, embed_error) = match embed::parse_query(&page.search) {
            Some(Ok(c)) => (Some(c), None),
            Some(Err(e)) => (None, Some(format!("The embed URL is not valid: {e}."))),
            None => (None, None),
        };
        let (lessons, key, scenario_error) = initial_session(page, embed.as_ref());
        let opened = lessons.opened.is_some();
        let (mut workspace, notice) = initial_workspace(page, &key, opened);
        if let Some(t) = embed.as_ref().and_then(|c| c.theme) {
            workspace.theme = t;
        }
        let url_scenario = lessons.id().map(str::to_owned);
        let (mut model, notice) = match Model::restore(workspace, lessons.clone()) {
            Ok(m) => (m, notice),
            Err(e) => {
                let mut fresh = Workspace::default();
                if opened {
                    fresh.actions.clear();
                }
                (
                    Model::from_workspace_with(fresh, lessons),
                    Some(format!(
                        "The saved session could not be replayed ({e}); started a fresh one."
                    )),
                )
            }
        };
        model.notice = embed_error.or(scenario_error).or(notice);
        model.first_edit_hint = embed.is_none()
            && model.lessons.id().is_none()
            && page.storage.is_some()
            && page.stored(persist::HINT_DONE_KEY).is_none();
        model.page = PageState {
            embed,
            url_scenario,
            ..PageState::default()
        };
        let effects = vec![Effect::ApplyTheme(model.theme)];
        (model, effects)
    }
}

/// The scenario a session opens from the URL (`?scenario=<gallery id>`, or `custom` for the
/// last file the reader opened), its lesson, the localStorage key the session owns, and a
/// notice when the scenario could not be opened.
fn initial_session(
    page: &StartingPage<'_>,
    embed: Option<&EmbedConfig>,
) -> (Lessons, String, Option<String>) {
    let id = match embed {
        Some(c) => c.scenario.clone(),
        None => embed::params(&page.search)
            .into_iter()
            .find(|(k, _)| k == "scenario")
            .map(|(_, v)| v),
    };
    let key = |id: Option<&str>| match (embed, id) {
        (Some(c), id) => c.storage_key(id),
        (None, Some(id)) => persist::scenario_storage_key(id),
        (None, None) => persist::STORAGE_KEY.to_owned(),
    };
    let Some(id) = id.filter(|i| !i.is_empty()) else {
        return (Lessons::default(), key(None), None);
    };
    let opened = if id == gallery::CUSTOM_ID {
        page.stored(persist::CUSTOM_TEXT_KEY)
            .ok_or_else(|| "no scenario file was opened in this browser".to_owned())
            .and_then(|t| gallery::open_text(&t))
    } else {
        gallery::open(&id)
    };
    match opened {
        Ok(o) => {
            let step = embed.map_or(0, |c| c.step);
            (Lessons::with(Rc::new(o), step), key(Some(&id)), None)
        }
        Err(e) => (
            Lessons::default(),
            key(None),
            Some(format!(
                "The scenario {id:?} could not be opened ({e}); showing the starter cluster."
            )),
        ),
    }
}

/// The workspace to start from: a share link, else localStorage (under `key`), else a fresh
/// one; with a notice when something could not be read.
fn initial_workspace(
    page: &StartingPage<'_>,
    key: &str,
    opened: bool,
) -> (Workspace, Option<String>) {
    let fresh = || {
        if opened {
            Workspace {
                actions: Vec::new(),
                ..Workspace::default()
            }
        } else {
            Workspace::default()
        }
    };
    if page.search.contains("starter=large") {
        return (Workspace::fresh(Starter::Large), None);
    }
    if persist::is_share_link(&page.hash) {
        return match persist::from_hash(&page.hash) {
            Ok(w) => (w, Some("Loaded the shared workspace from the link.".into())),
            Err(e) => (
                fresh(),
                Some(format!(
                    "The share link could not be opened ({e}); started fresh."
                )),
            ),
        };
    }
    match page.stored(key) {
        None => (fresh(), None),
        Some(text) => match persist::from_json(&text) {
            Ok(w) => (w, None),
            Err(e) => (
                fresh(),
                Some(format!(
                    "Your saved workspace could not be restored ({e}); started a fresh one."
                )),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn boot(search: &str, hash: &str, stored: &[(&str, &str)]) -> (Model, Vec<Effect>) {
        let items: BTreeMap<String, String> = stored
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let read = |k: &str| items.get(k).cloned();
        Model::boot(&StartingPage {
            search: search.into(),
            hash: hash.into(),
            storage: Some(&read),
        })
    }

    #[test]
    fn a_first_visit_starts_the_starter_with_the_hint_and_applies_the_theme() {
        let (m, effects) = boot("", "", &[]);
        assert!(m.first_edit_hint);
        assert_eq!(m.notice, None);
        assert_eq!(m.lessons.id(), None);
        assert_eq!(effects, vec![Effect::ApplyTheme(m.theme)]);
    }

    #[test]
    fn a_scenario_in_the_url_opens_it_and_its_storage_key() {
        let (m, _) = boot("?scenario=scale-up", "", &[]);
        assert_eq!(m.lessons.id(), Some("scale-up"));
        assert_eq!(m.page.url_scenario.as_deref(), Some("scale-up"));
        assert_eq!(m.storage_key(), "converge.workspace.scenario.scale-up");
        assert!(!m.first_edit_hint);
    }

    #[test]
    fn unreadable_inputs_fall_back_with_a_notice() {
        let (m, _) = boot("?scenario=nope", "", &[]);
        assert_eq!(m.lessons.id(), None);
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("The scenario \"nope\" could not be opened")));
        let (m, _) = boot("", "", &[("converge.workspace", "{")]);
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Your saved workspace could not be restored")));
        let (m, _) = boot("?embed&theme=pink", "", &[]);
        assert!(m.page.embed.is_none());
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("The embed URL is not valid")));
    }

    #[test]
    fn without_storage_the_hint_is_not_shown() {
        let (m, _) = Model::boot(&StartingPage {
            search: String::new(),
            hash: String::new(),
            storage: None,
        });
        assert!(!m.first_edit_hint);
    }
}
