//! Reading a SCENARIO argument: the file's text, loaded and validated by core.

use converge_core::scenario::Scenario;

use crate::CliError;

/// The scenario in `path` (or a scenario made from the Kubernetes manifests in it); errors name
/// the file: `web.yaml: line 3, column 1: ...`.
pub fn read_scenario(path: &str) -> Result<Scenario, CliError> {
    let name = crate::input::display_name(path);
    let bytes =
        crate::input::read_file_bytes(path).map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| CliError::input(format!("{name}: the input is not UTF-8 text")))?;
    match Scenario::load(text) {
        Ok(s) => Ok(s),
        // Plain Kubernetes manifests run as a scenario that creates them at t=0 as admin.
        Err(e) => match Scenario::from_manifests(text, name) {
            Some(Ok(s)) => Ok(s),
            Some(Err(m)) => Err(CliError::input(format!("{name}: {m}"))),
            None => Err(CliError::input(format!("{name}: {e}"))),
        },
    }
}

/// The file name shown in check lines: the path as given.
pub fn label(path: &str) -> String {
    crate::input::display_name(path).to_owned()
}
