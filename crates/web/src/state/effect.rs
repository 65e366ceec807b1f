//! What the reducer asks the outside world to do, as values: `Model::update` returns them and
//! `crate::platform` performs them, so every decision stays testable natively and the browser
//! calls sit in one place.

use converge_core::json::Value;

use super::{Theme, Workspace};

/// One side effect, decided by the state and performed by the platform.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Write the workspace to localStorage under `key` (core's versioned JSON).
    SaveWorkspace {
        key: String,
        workspace: Box<Workspace>,
        /// A starter session past `checkpoint::WORTH_EVENTS`: the page tells web/checkpoint.js,
        /// which keeps a checkpoint of it for the next visit.
        worth_checkpoint: bool,
    },
    /// Remember that the newcomer's hint has gone (`persist::HINT_DONE_KEY`).
    MarkHintDone,
    /// Keep the text of the scenario file the reader opened, so `?scenario=custom` reopens it.
    KeepCustomScenario { text: String },
    /// Put `?scenario=<id>` (None: no query) in the address bar with replaceState.
    ShowScenarioInUrl { scenario: Option<String> },
    /// Put this share-link hash in the address bar with replaceState.
    ReplaceHash { hash: String },
    /// Put the share link in the address bar and answer with `Msg::ShareLinkReady(full url)`.
    PublishShareLink { hash: String },
    /// (Re)start the quiet period after which the address bar follows the workspace
    /// (`Msg::SyncHash`); a newer change restarts it.
    ScheduleHashSync,
    /// Start the play timer (`Msg::Tick` every `TICK_MS`).
    StartTicking,
    /// Stop the play timer.
    StopTicking,
    /// Set the page's colour theme (`data-theme` on the root element).
    ApplyTheme(Theme),
    /// The checkpoint web/boot.js offered at start does not fit the session or could not be
    /// read: web/checkpoint.js deletes it (`state::checkpoint`).
    ForgetCheckpoint,
    /// Mark `converge-step-start` (before the reducer runs: `Model::before_update`); the step
    /// is measured once the DOM is patched.
    MarkStepStart,
    /// Post a message to the embedding host page, for `target_origin` only (`*`: any).
    PostToHost {
        message: Value,
        target_origin: String,
    },
    /// Answer the window whose message is being handled, for `origin` only.
    ReplyToSender { message: Value, origin: String },
    /// Open the help dialog, remembering what had focus.
    OpenHelpDialog,
    /// The terminal opened: its command line takes focus.
    FocusTerminal,
    /// In the build without the terminal: reload the page into the terminal's build, which
    /// opens the pane (the session was saved by the effect before).
    LoadTerminalBuild,
    /// The help dialog closed: give focus back to what had it.
    ReturnFocusAfterHelp,
    /// Once the view is drawn, move focus to the element with this id (a panel that just
    /// opened, such as the "Why?" chain).
    FocusAfterRender(&'static str),
}

/// What one update did: whether the view must re-render, and the effects to perform in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reaction {
    pub render: bool,
    pub effects: Vec<Effect>,
}

impl Reaction {
    /// Nothing to draw, nothing to do.
    pub fn none() -> Self {
        Reaction::default()
    }

    /// Effects only, no re-render.
    pub fn effects(effects: Vec<Effect>) -> Self {
        Reaction {
            render: false,
            effects,
        }
    }

    /// A re-render and no effect.
    pub fn render() -> Self {
        Reaction {
            render: true,
            effects: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use converge_core::json::json;

    use super::*;
    use crate::state::embed::parse_query;
    use crate::state::lesson::LessonMsg;
    use crate::state::{Model, Msg};

    fn saved_under(effects: &[Effect]) -> Vec<&str> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::SaveWorkspace { key, .. } => Some(key.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn why_opens_a_chain_with_focus_and_a_hop_scrubs_and_selects() {
        use super::super::{TimelineView, WhyOf, WHY_HEADING};
        let mut m = Model::default();
        let web = m.selected.clone().expect("the starter selects web");
        let r = m.update(Msg::Why(
            web.clone(),
            WhyOf::Field("status.readyReplicas".into()),
        ));
        assert!(r.render);
        assert!(r.effects.contains(&Effect::FocusAfterRender(WHY_HEADING)));
        let chain = m.why.clone().expect("a chain");
        let rows = &chain.as_ref().as_ref().expect("walked").rows;
        assert!(rows
            .last()
            .is_some_and(|r| r.text.contains("root: request by alice")));
        // The root leads to alice's create, one step before the live world.
        let root = rows.last().expect("a root");
        let (step, key) = (
            root.step.expect("a step"),
            root.object.clone().expect("web"),
        );
        assert!(step < m.world.steps());
        m.update(Msg::FollowHop(step, key.clone()));
        assert_eq!(m.cursor, Some(step));
        assert_eq!(m.selected.as_ref(), Some(&key));
        assert!(m.why.is_some(), "the chain stays open");
        // A badge's chain leads with the verdict; a field the object lacks is a message.
        m.update(Msg::Why(web.clone(), WhyOf::Badge));
        let chain = m.why.clone().expect("a chain");
        assert!(chain
            .as_ref()
            .as_ref()
            .is_ok_and(|v| v.rows[0].text.starts_with("kstatus=")));
        m.update(Msg::Why(web, WhyOf::Field("status.nothing".into())));
        assert!(m.why.as_deref().is_some_and(|w| w.is_err()));
        m.update(Msg::CloseWhy);
        assert!(m.why.is_none());
        // The timeline's form is the page's; the sequence diagram by default.
        assert_eq!(m.page.timeline_view, TimelineView::Sequence);
        m.update(Msg::SetTimelineView(TimelineView::Cards));
        assert_eq!(m.page.timeline_view, TimelineView::Cards);
        assert!(!m.sequence_view().folding || !m.page.idle_deliveries);
    }

    #[test]
    fn a_step_is_measured_and_saved() {
        let mut m = Model::default();
        assert_eq!(m.before_update(&Msg::Step), vec![Effect::MarkStepStart]);
        assert_eq!(m.before_update(&Msg::Reset), vec![]);
        let r = m.update(Msg::Step);
        assert!(r.render);
        assert_eq!(saved_under(&r.effects), vec!["converge.workspace"]);
        assert!(!r.effects.contains(&Effect::MarkStepStart), "marked before");
    }

    #[test]
    fn play_starts_the_timer_ticks_are_not_saved_one_by_one_and_pause_saves() {
        let mut m = Model::default();
        let r = m.update(Msg::TogglePlay);
        assert_eq!(r.effects[0], Effect::StartTicking);
        assert_eq!(saved_under(&r.effects).len(), 1);
        let r = m.update(Msg::Tick);
        assert!(r.render);
        assert!(r.effects.is_empty(), "{:?}", r.effects);
        let r = m.update(Msg::TogglePlay);
        assert_eq!(r.effects[0], Effect::StopTicking);
        assert_eq!(saved_under(&r.effects).len(), 1);
        assert_eq!(m.update(Msg::Tick), Reaction::none());
    }

    #[test]
    fn the_page_is_told_about_the_theme_the_hint_and_the_scenario() {
        let mut m = Model::default();
        let r = m.update(Msg::SetTheme(Theme::Dark));
        assert!(r.effects.contains(&Effect::ApplyTheme(Theme::Dark)));
        m.first_edit_hint = true;
        let r = m.update(Msg::DismissHint);
        assert!(r.effects.contains(&Effect::MarkHintDone));
        let r = m.update(Msg::Lesson(LessonMsg::Open("scale-up".into())));
        assert!(r.effects.contains(&Effect::ShowScenarioInUrl {
            scenario: Some("scale-up".into())
        }));
        assert_eq!(
            saved_under(&r.effects),
            vec!["converge.workspace.scenario.scale-up"]
        );
        let r = m.update(Msg::Lesson(LessonMsg::Close));
        assert!(r
            .effects
            .contains(&Effect::ShowScenarioInUrl { scenario: None }));
    }

    #[test]
    fn a_shown_share_link_follows_later_changes() {
        let mut m = Model::default();
        let r = m.update(Msg::Share);
        assert!(!r.render);
        assert!(
            matches!(&r.effects[..], [Effect::PublishShareLink { hash }] if hash.starts_with("#w1."))
        );
        assert_eq!(
            m.update(Msg::SyncHash),
            Reaction::none(),
            "no link shown yet"
        );
        assert!(
            m.update(Msg::ShareLinkReady("http://x/#w1.a".into()))
                .render
        );
        let r = m.update(Msg::Step);
        assert_eq!(r.effects.last(), Some(&Effect::ScheduleHashSync));
        let r = m.update(Msg::SyncHash);
        assert!(
            matches!(&r.effects[..], [Effect::ReplaceHash { hash }] if hash.starts_with("#w1."))
        );
    }

    #[test]
    fn the_help_dialog_and_leaving_the_page_are_effects_without_a_render() {
        let mut m = Model::default();
        assert_eq!(
            m.update(Msg::ShowHelp),
            Reaction::effects(vec![Effect::OpenHelpDialog])
        );
        assert_eq!(
            m.update(Msg::HelpClosed),
            Reaction::effects(vec![Effect::ReturnFocusAfterHelp])
        );
        let r = m.update(Msg::PageHidden);
        assert!(!r.render);
        assert_eq!(saved_under(&r.effects), vec!["converge.workspace"]);
    }

    #[test]
    fn the_host_page_is_answered_and_told_the_height_once() {
        let mut m = Model::default();
        m.page.embed =
            parse_query("?embed&id=a&origin=https://docs.example.com").and_then(Result::ok);
        let r = m.update(Msg::FromHost {
            data: json!({"converge": 1, "type": "step"}),
            origin: "https://evil.example".into(),
        });
        assert!(!r.render);
        assert!(
            matches!(&r.effects[..], [Effect::ReplyToSender { message, origin }]
            if message["type"] == "error" && origin == "https://evil.example")
        );
        let step = Msg::FromHost {
            data: json!({"converge": 1, "type": "step", "requestId": 7}),
            origin: "https://docs.example.com".into(),
        };
        assert_eq!(m.before_update(&step), vec![Effect::MarkStepStart]);
        let r = m.update(step);
        assert!(r.render);
        assert_eq!(saved_under(&r.effects), vec!["converge.embed.a.starter"]);
        assert!(
            matches!(r.effects.last(), Some(Effect::ReplyToSender { message, .. })
            if message["type"] == "state" && message["requestId"] == 7 && message["steps"] == 3)
        );
        let r = m.update(Msg::ContentHeight(300));
        assert!(
            matches!(&r.effects[..], [Effect::PostToHost { message, target_origin }]
            if message["height"] == 300 && target_origin == "https://docs.example.com")
        );
        assert_eq!(m.update(Msg::ContentHeight(300)), Reaction::none());
    }
}
