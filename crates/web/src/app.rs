//! The root component: it owns the [`Model`] and the [`Platform`], sends every message through
//! `Model::update`, has the platform perform the effects it returns, and lays the panels out
//! (the full playground, or embed mode's minimal one). Nothing is decided here.

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;

use crate::components::editor::Diagnostic;
#[cfg(feature = "terminal")]
use crate::components::TerminalPanelProps;
use crate::components::{
    memo, notice_bar, simulation_toolbar, topbar, EditorPanelProps, FaultPanelProps,
    GalleryPanelProps, HelpDialogProps, LessonPanelProps, NoticeBarProps, ObjectTreeProps,
    PanelInputs, SimulationToolbarProps, StatusPanelProps, TimelinePanelProps, TopbarProps,
};
use crate::platform::shortcuts::Shortcut;
use crate::platform::{self, Platform};
use crate::state::lesson::LessonMsg;
use crate::state::{Model, Msg, Reaction, Ready, TerminalMsg, TimelineView};

/// What reaches the root: a model message, or a host page's message with the window that sent
/// it (replies go there; the state never sees a window).
pub enum AppMsg {
    Model(Msg),
    /// The next part of the first render (see [`Drawn`]), a browser task after the last.
    DrawMore,
    Host {
        data: converge_core::json::Value,
        origin: String,
        source: Option<web_sys::Window>,
    },
}

impl From<Msg> for AppMsg {
    fn from(m: Msg) -> Self {
        AppMsg::Model(m)
    }
}

/// The model the page's boot built in tasks (`crate::start`), handed to the [`App`] when it is
/// created. Empty (the default) the App boots from the page itself, in one go.
#[derive(Clone, Default)]
pub struct Booted(Rc<RefCell<Option<Ready>>>);

impl Booted {
    pub fn new(ready: Ready) -> Self {
        Booted(Rc::new(RefCell::new(Some(ready))))
    }

    fn take(&self) -> Option<Ready> {
        self.0.borrow_mut().take()
    }
}

impl PartialEq for Booted {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Properties, PartialEq, Default)]
pub struct AppProps {
    #[prop_or_default]
    pub booted: Booted,
}

/// How much of the page the first renders have drawn. The first render is cut into browser tasks
/// (`platform::tasks`), one render each, so no one task creates the whole page's DOM or lays it
/// all out (BENCHMARKS.md, issue 23). The page is hidden while index.html's skeleton shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Drawn {
    /// The header, the controls and the object list.
    Top,
    /// The editor and status panes and the help dialog too.
    Panes,
    /// The timeline and the fault panel too.
    Everything,
    /// Shown (boot.js removes the skeleton: `converge-shown`), but the timeline and the fault
    /// panel, which are laid out in the next frame; they come below everything else, so nothing
    /// moves when they do.
    Shown,
    /// Everything shown, not busy, listening: the next `rendered` announces `converge-ready`.
    Ready,
    /// `converge-ready` announced.
    Announced,
}

pub struct App {
    model: Model,
    drawn: Drawn,
    platform: Platform,
    /// One callback for every panel: kept, so the panels' props compare equal across renders.
    send: Callback<Msg>,
    /// The gallery's file picker: the platform reads the file, the text opens as a scenario.
    on_file: Callback<web_sys::File>,
    help: NodeRef,
    /// The page's root element.
    root: NodeRef,
}

/// The message a keyboard shortcut stands for.
fn shortcut_msg(s: Shortcut) -> Msg {
    match s {
        Shortcut::TogglePlay => Msg::TogglePlay,
        Shortcut::Step => Msg::Step,
        Shortcut::NextEvent => Msg::NextEvent,
        Shortcut::RunUntilConverged => Msg::RunUntilConverged,
        Shortcut::Help => Msg::ShowHelp,
        Shortcut::ToggleTerminal => Msg::Terminal(TerminalMsg::Toggle),
    }
}

impl Component for App {
    type Message = AppMsg;
    type Properties = AppProps;

    fn create(ctx: &Context<Self>) -> Self {
        let Ready { model, effects } = ctx.props().booted.take().unwrap_or_else(|| {
            let (model, effects) = platform::with_starting_page(Model::boot);
            Ready { model, effects }
        });
        let send = ctx.link().callback(AppMsg::Model);
        let on_file = {
            let opened = send.reform(|text: Option<String>| {
                Msg::Lesson(LessonMsg::OpenText(text.unwrap_or_default()))
            });
            Callback::from(move |file| platform::read_file_text(file, opened.clone()))
        };
        let help = NodeRef::default();
        let mut app = App {
            model,
            drawn: Drawn::Top,
            platform: Platform::new(send.clone(), help.clone()),
            send,
            on_file,
            help,
            root: NodeRef::default(),
        };
        let _ = app.run(Reaction::effects(effects), None);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        match msg {
            AppMsg::Model(m) => self.dispatch(m, None),
            AppMsg::DrawMore => {
                self.drawn = match self.drawn {
                    Drawn::Top => Drawn::Panes,
                    Drawn::Panes => Drawn::Everything,
                    Drawn::Everything => {
                        // boot.js removes the skeleton now, and the render that shows the page
                        // follows before yew's scheduler may yield: no frame shows both.
                        platform::announce_shown();
                        Drawn::Shown
                    }
                    Drawn::Shown => {
                        // Before the render that says the page is no longer busy, which yew may
                        // not finish (`rendered`) in this task.
                        self.listen(ctx);
                        Drawn::Ready
                    }
                    drawn @ (Drawn::Ready | Drawn::Announced) => drawn,
                };
                true
            }
            AppMsg::Host {
                data,
                origin,
                source,
            } => self.dispatch(Msg::FromHost { data, origin }, source.as_ref()),
        }
    }

    fn rendered(&mut self, ctx: &Context<Self>, _first_render: bool) {
        self.platform.rendered();
        if self.drawn < Drawn::Ready {
            let link = ctx.link().clone();
            let more = move || link.send_message(AppMsg::DrawMore);
            match (self.drawn, self.root.cast::<web_sys::Element>()) {
                // The rest is laid out in a frame of its own.
                (Drawn::Shown, Some(root)) => platform::tasks::after_layout(&root, more),
                _ => platform::tasks::next_task(more),
            }
        } else if self.drawn == Drawn::Ready {
            self.drawn = Drawn::Announced;
            let _ = self.dispatch(Msg::Started, None);
            self.platform.announce_ready();
            if !self.model.page.gallery.loaded() {
                platform::fetch_gallery(ctx.link().callback(AppMsg::Model));
            }
            if platform::take_open_terminal_request() {
                let msg = if cfg!(feature = "terminal") {
                    Msg::Terminal(TerminalMsg::Toggle)
                } else {
                    Msg::Notice(
                        "The kubectl terminal could not be loaded (offline?): this page \
                                 has everything else."
                            .into(),
                    )
                };
                // Through the loop, so the pane it opens is drawn.
                ctx.link().send_message(AppMsg::Model(msg));
            }
        }
        // Until then, the page has no height to report.
        if self.drawn == Drawn::Announced && self.model.page.embed.is_some() {
            if let Some(px) = platform::host_page::content_height() {
                let _ = self.dispatch(Msg::ContentHeight(px), None);
            }
        }
    }

    fn view(&self, _ctx: &Context<Self>) -> Html {
        if self.model.page.embed.is_some() {
            return self.view_embed();
        }
        let m = &self.model;
        let shown = m.shown();
        let d = self.drawn;
        html! {
            <div class="shell" ref={self.root.clone()} hidden={d < Drawn::Shown} aria-busy={(d < Drawn::Ready).to_string()}>
                <a class="skip" href="#spec-editor">{ "Skip to the editor" }</a>
                { topbar(&TopbarProps { theme: m.theme, send: self.send.clone() }) }
                { self.notices() }
                { self.gallery() }
                { self.toolbar() }
                { self.lesson() }
                if m.terminal.open && d >= Drawn::Panes {
                    <div id="terminal-pane">{ self.terminal() }</div>
                }
                <main class="panes">
                    { self.object_tree() }
                    if d >= Drawn::Panes {
                        { self.editor() }
                        { self.status() }
                    }
                </main>
                if d >= Drawn::Everything {
                    <div class="shell-rest" hidden={d < Drawn::Ready}>
                        { self.timeline() }
                        { memo(PanelInputs::Faults(FaultPanelProps {
                            controllers: m.controller_rows(),
                            nodes: m.node_names(),
                            rbac_enforced: m.world.api().rbac_enforced(),
                            send: self.send.clone(),
                        })) }
                    </div>
                }
                if d >= Drawn::Panes {
                    { memo(PanelInputs::Help(HelpDialogProps { dialog: self.help.clone(), send: self.send.clone() })) }
                }
                if m.cursor.is_some() {
                    <p class="scrub-note" role="status">{ format!("Viewing step {} of {}: steps and edits fork from here.", shown.steps(), m.world.steps()) }</p>
                }
            </div>
        }
    }
}

impl App {
    /// The page-wide listeners: the shortcuts, `pagehide`, and in embed mode the host page.
    fn listen(&mut self, ctx: &Context<Self>) {
        let link = ctx.link().clone();
        self.platform
            .listen_for_shortcuts(move |s| link.send_message(AppMsg::Model(shortcut_msg(s))));
        self.platform.listen_for_pagehide();
        if self.model.page.embed.is_some() {
            let link = ctx.link().clone();
            self.platform.listen_to_host(move |data, origin, source| {
                link.send_message(AppMsg::Host {
                    data,
                    origin,
                    source,
                })
            });
        }
    }

    /// One message through the loop: the effects that must come first, the update, then the
    /// effects it returns. `sender` is the window a host message came from (replies go there).
    fn dispatch(&mut self, msg: Msg, sender: Option<&web_sys::Window>) -> bool {
        for effect in self.model.before_update(&msg) {
            // Only marks come first; none answers with a message.
            let _ = self.platform.perform(effect, sender);
        }
        let reaction = self.model.update(msg);
        self.run(reaction, sender)
    }

    /// Performs a reaction's effects in order; an effect that answers with a message has that
    /// message updated at once, and its effects performed, before the next effect. Returns
    /// whether to re-render.
    fn run(&mut self, reaction: Reaction, sender: Option<&web_sys::Window>) -> bool {
        let mut render = reaction.render;
        for effect in reaction.effects {
            if let Some(answer) = self.platform.perform(effect, sender) {
                let next = self.model.update(answer);
                render |= self.run(next, sender);
            }
        }
        render
    }

    /// Embed mode: the scenario's name, the controls, the lesson (with `lesson`), the objects
    /// and status; the editor only without `readonly`.
    fn view_embed(&self) -> Html {
        let m = &self.model;
        let Some(cfg) = &m.page.embed else {
            return html! {};
        };
        let title = m
            .lessons
            .opened
            .as_ref()
            .map(|o| o.scenario.name.clone())
            .unwrap_or_else(|| "Converge".into());
        let full = match m.lessons.id() {
            Some(id) => format!("./?scenario={id}"),
            None => "./".into(),
        };
        html! {
            <div class={classes!("shell", "embed", cfg.readonly.then_some("readonly"))} data-embed={cfg.id.clone()}
                ref={self.root.clone()} hidden={self.drawn < Drawn::Shown} aria-busy={(self.drawn < Drawn::Ready).to_string()}>
                <header class="embed-bar">
                    <h1>{ title }</h1>
                    <a href={full} target="_blank" rel="noopener">{ "Open in Converge ↗" }</a>
                </header>
                { self.notices() }
                { self.toolbar() }
                if cfg.lesson { { self.lesson() } }
                <main class="panes">
                    { self.object_tree() }
                    if !cfg.readonly { { self.editor() } }
                    { self.status() }
                </main>
            </div>
        }
    }

    fn notices(&self) -> Html {
        let m = &self.model;
        notice_bar(&NoticeBarProps {
            notice: m.notice.clone().map(AttrValue::from),
            share_url: m.page.share_url.clone().map(AttrValue::from),
            send: self.send.clone(),
        })
    }

    fn gallery(&self) -> Html {
        let l = &self.model.lessons;
        memo(PanelInputs::Gallery(GalleryPanelProps {
            gallery_open: l.gallery_open,
            cards: l.cards.clone(),
            paste: AttrValue::from(l.paste.clone()),
            error: l.error.clone().map(AttrValue::from),
            open_scenario: l
                .opened
                .as_ref()
                .map(|o| AttrValue::from(o.scenario.name.clone())),
            on_file: self.on_file.clone(),
            send: self.send.clone(),
        }))
    }

    fn toolbar(&self) -> Html {
        let m = &self.model;
        let w = m.shown();
        simulation_toolbar(&SimulationToolbarProps {
            playing: m.playing,
            speed: m.speed,
            now: w.now(),
            steps: w.steps(),
            converged: w.is_converged(),
            terminal_open: m.terminal.open,
            send: self.send.clone(),
        })
    }

    #[cfg(feature = "terminal")]
    fn terminal(&self) -> Html {
        let t = &self.model.terminal;
        memo(PanelInputs::Terminal(TerminalPanelProps {
            entries: t.entries.clone(),
            input: AttrValue::from(t.input.clone()),
            completions: t.completions.clone(),
            watching: t.watch.is_some(),
            send: self.send.clone(),
        }))
    }

    /// The build without the terminal never opens the pane (its button loads the other build).
    #[cfg(not(feature = "terminal"))]
    fn terminal(&self) -> Html {
        Html::default()
    }

    /// The lesson panel, at the shown moment's progress; nothing on the starter cluster.
    fn lesson(&self) -> Html {
        let m = &self.model;
        let l = &m.lessons;
        let (Some(opened), Some(progress)) = (&l.opened, l.progress_at(m.shown())) else {
            return html! {};
        };
        memo(PanelInputs::Lesson(LessonPanelProps {
            opened: opened.clone(),
            progress,
            answer: l.answer,
            send: self.send.clone(),
        }))
    }

    fn object_tree(&self) -> Html {
        let m = &self.model;
        memo(PanelInputs::ObjectTree(ObjectTreeProps {
            rows: m.rows.clone(),
            count: m.tree.len(),
            selected: m.selected.clone(),
            send: self.send.clone(),
        }))
    }

    fn editor(&self) -> Html {
        let m = &self.model;
        memo(PanelInputs::Editor(EditorPanelProps {
            text: AttrValue::from(m.editor_text.clone()),
            syntax: m.syntax,
            diagnostics: m.diagnostics.iter().map(Diagnostic::from).collect(),
            principal: AttrValue::from(m.principal.clone()),
            target: m.target,
            outcome: m.outcome.clone(),
            selected: m.selected.clone(),
            drift: m.editor_drift(),
            first_edit_hint: m.first_edit_hint,
            send: self.send.clone(),
        }))
    }

    fn status(&self) -> Html {
        let m = &self.model;
        memo(PanelInputs::Status(StatusPanelProps {
            view: m.status_view(),
            events: m.events_view(),
            selected: m.selected.clone(),
            why: m.why.clone(),
            step: m.shown().steps(),
            first_step: m.first_kept_step(),
            chart: m.chart_view(),
            send: self.send.clone(),
        }))
    }

    fn timeline(&self) -> Html {
        let m = &self.model;
        let view = m.page.timeline_view;
        let cards = view == TimelineView::Cards;
        memo(PanelInputs::Timeline(TimelinePanelProps {
            view,
            lanes: if cards {
                m.timeline_lanes()
            } else {
                Vec::new()
            },
            sequence: (!cards).then(|| m.sequence_view()),
            restored: m.shown_step_restored(),
            upto: m.shown().steps(),
            min: m.first_kept_step(),
            max: m.world.steps(),
            scrubbed: m.cursor.is_some(),
            selected: m.selected_entry.clone(),
            send: self.send.clone(),
        }))
    }
}
