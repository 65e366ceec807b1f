//! The playground's state and its reducer. No DOM here: everything is testable natively.

use converge_core::time::SimTime;

/// How far one press of Step moves the simulated clock while the engine is a bare clock.
pub const STEP_MS: u64 = 100;

/// The starter manifest shown in the editor: a Deployment a newcomer can edit right away.
pub const STARTER_DEPLOYMENT: &str = r#"{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": { "name": "web", "namespace": "default" },
  "spec": {
    "replicas": 3,
    "selector": { "matchLabels": { "app": "web" } },
    "template": {
      "metadata": { "labels": { "app": "web" } },
      "spec": { "containers": [{ "name": "web", "image": "nginx:1.27" }] }
    }
  }
}"#;

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub clock: SimTime,
    pub steps: u64,
    pub playing: bool,
    pub editor_text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Step,
    TogglePlay,
    /// A timer tick while playing.
    Tick,
    Reset,
    EditorInput(String),
}

impl Default for Model {
    fn default() -> Self {
        Model {
            clock: SimTime::ZERO,
            steps: 0,
            playing: false,
            editor_text: STARTER_DEPLOYMENT.to_owned(),
        }
    }
}

impl Model {
    /// Applies one message; returns whether the view must re-render.
    pub fn update(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Step => self.advance(),
            Msg::Tick if self.playing => self.advance(),
            Msg::Tick => return false,
            Msg::TogglePlay => self.playing = !self.playing,
            Msg::Reset => {
                let text = std::mem::take(&mut self.editor_text);
                *self = Model {
                    editor_text: text,
                    ..Model::default()
                };
            }
            Msg::EditorInput(text) => self.editor_text = text,
        }
        true
    }

    fn advance(&mut self) {
        self.clock = self.clock.plus_ms(STEP_MS);
        self.steps += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_moves_the_clock_and_counts() {
        let mut m = Model::default();
        m.update(Msg::Step);
        m.update(Msg::Step);
        assert_eq!(m.clock, SimTime(200));
        assert_eq!(m.steps, 2);
    }

    #[test]
    fn ticks_only_advance_while_playing() {
        let mut m = Model::default();
        assert!(!m.update(Msg::Tick));
        m.update(Msg::TogglePlay);
        m.update(Msg::Tick);
        assert_eq!(m.steps, 1);
    }

    #[test]
    fn reset_keeps_the_users_text() {
        let mut m = Model::default();
        m.update(Msg::EditorInput("{\"kind\": \"mine\"}".into()));
        m.update(Msg::Step);
        m.update(Msg::Reset);
        assert_eq!(m.steps, 0);
        assert_eq!(m.editor_text, "{\"kind\": \"mine\"}");
    }
}
