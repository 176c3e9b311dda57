//! `spin build`: runs each component's `[component.<id>.build]` command.

use crate::manifest::Manifest;
use anyhow::{bail, Context, Result};
use std::process::Command;

/// Runs the build commands of `only` (or of every component), in manifest order, stopping
/// at the first failure with the component and command named.
pub fn build(manifest: &Manifest, only: &[String]) -> Result<()> {
    for id in only {
        if !manifest.components.contains_key(id) {
            bail!("no component `{id}` in {}", manifest.path.display());
        }
    }
    for (id, c) in &manifest.components {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        let Some(build) = &c.build else {
            eprintln!("spin-local: component `{id}` has no build command; skipping");
            continue;
        };
        let workdir = match &build.workdir {
            Some(w) => manifest.dir().join(w),
            None => manifest.dir().to_path_buf(),
        };
        for command in build.command.commands() {
            eprintln!("spin-local: building `{id}`: {command}");
            let status = Command::new("sh")
                .arg("-c")
                .arg(&command)
                .current_dir(&workdir)
                .status()
                .with_context(|| format!("cannot run the build command of `{id}`"))?;
            if !status.success() {
                bail!("build of component `{id}` failed ({status}): {command}");
            }
        }
    }
    Ok(())
}
