//! `slurm-wasm new <kind> <name>`: a plugin project of its own, outside
//! this repository, that builds to a component with one command, passes
//! `check` unchanged and has a native test.
//!
//! The project is one of the small examples (`examples/priority-small-first`,
//! `examples/task-one-cpu`, `examples/gres-count-only`, which CI builds and
//! checks as they are) with the plugin's name put in: the type string, the
//! Rust type and the crate name. It depends on the SDK by path (the SDK of
//! the checkout this binary was built from, or `--sdk`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A template: the example's files and the names in it that the new
/// plugin's replace.
struct Template {
    kind: &'static str,
    /// `<kind>/<name>` of the example.
    plugin_type: &'static str,
    /// Its Rust type.
    type_name: &'static str,
    /// Its crate, as Rust names it.
    crate_ident: &'static str,
    lib: &'static str,
    test: &'static str,
    /// What the plugin does, for the project's README.
    what: &'static str,
}

const TEMPLATES: [Template; 3] = [
    Template {
        kind: "priority",
        plugin_type: "priority/small_first",
        type_name: "SmallFirst",
        crate_ident: "priority_small_first",
        lib: include_str!("../../examples/priority-small-first/src/lib.rs"),
        test: include_str!("../../examples/priority-small-first/tests/small_first.rs"),
        what: "small jobs first, weighted by the partition's PriorityJobFactor",
    },
    Template {
        kind: "task",
        plugin_type: "task/one_cpu",
        type_name: "OneCpu",
        crate_ident: "task_one_cpu",
        lib: include_str!("../../examples/task-one-cpu/src/lib.rs"),
        test: include_str!("../../examples/task-one-cpu/tests/one_cpu.rs"),
        what: "each task bound to one CPU of its step (grants: topology, cpuset)",
    },
    Template {
        kind: "gres",
        plugin_type: "gres/fpga",
        type_name: "Fpga",
        crate_ident: "gres_count_only",
        lib: include_str!("../../examples/gres-count-only/src/lib.rs"),
        test: include_str!("../../examples/gres-count-only/tests/fpga.rs"),
        what: "a count-only GRES whose jobs see SLURM_<NAME>_COUNT",
    },
];

/// The SDK of the checkout this binary was built from.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sdk");

/// What `new` was asked for.
pub struct NewRequest {
    pub kind: String,
    pub name: String,
    pub dir: Option<PathBuf>,
    pub sdk: Option<PathBuf>,
}

/// Writes the project and prints what to do next.
///
/// # Errors
/// A kind without a template (select: see the message), a name that is not
/// `[a-z][a-z0-9_]*`, a directory that exists and is not empty, an SDK
/// directory without the SDK's Cargo.toml, or a file that cannot be
/// written.
pub fn run(request: NewRequest) -> Result<std::process::ExitCode> {
    let template = TEMPLATES
        .iter()
        .find(|t| t.kind == request.kind)
        .with_context(|| match request.kind.as_str() {
            "select" => "no select template yet: a select plugin implements the bindings' \
                         SelectGuest (see guests/select-linear); `new` makes priority, task \
                         and gres plugins"
                .to_string(),
            other => format!("unknown kind `{other}`: priority, task or gres"),
        })?;
    let name = &request.name;
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        bail!("plugin name `{name}`: use lower-case letters, digits and `_`, starting with a letter (Slurm's plugin names, e.g. `fair_small`)");
    }
    let package = format!("{}-{}", template.kind, name.replace('_', "-"));
    let dir = request.dir.unwrap_or_else(|| PathBuf::from(&package));
    if dir.exists() && std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_some()) {
        bail!(
            "{}: exists and is not empty; name a new directory with --dir",
            dir.display()
        );
    }
    let sdk = request.sdk.unwrap_or_else(|| PathBuf::from(BUILT_SDK));
    let sdk = std::fs::canonicalize(&sdk)
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
        .with_context(|| {
            format!(
                "{}: no slurm-wasm-sdk there (the checkout this binary was built from moved?): \
                 give the SDK's directory with --sdk <checkout>/sdk",
                sdk.display()
            )
        })?;

    let plugin_type = format!("{}/{name}", template.kind);
    let type_name: String = name
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| w[..1].to_ascii_uppercase() + &w[1..])
        .collect();
    let crate_ident = package.replace('-', "_");
    let fill = |text: &str| {
        text.replace(template.plugin_type, &plugin_type)
            .replace(template.type_name, &type_name)
            .replace(template.crate_ident, &crate_ident)
            .replace("FPGA", &name.to_ascii_uppercase())
            .replace("\"fpga\"", &format!("\"{name}\""))
    };
    let files = [
        ("Cargo.toml", cargo_toml(&package, template.kind, &sdk)),
        ("src/lib.rs", fill(template.lib)),
        (&format!("tests/{name}.rs") as &str, fill(template.test)),
        (
            "README.md",
            readme(&package, &plugin_type, template, &crate_ident),
        ),
        (".gitignore", "/target\n".to_string()),
    ];
    for (file, text) in files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "created {plugin_type} in {} ({}); next:\n  cd {}\n  cargo test\n  cargo build --release --target wasm32-wasip2\n  slurm-wasm check target/wasm32-wasip2/release/{crate_ident}.wasm",
        dir.display(),
        template.what,
        dir.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

fn cargo_toml(package: &str, kind: &str, sdk: &Path) -> String {
    format!(
        r#"[package]
name = "{package}"
version = "0.1.0"
edition = "2021"
publish = false

# cdylib: the component (`cargo build --release --target wasm32-wasip2`);
# rlib: the native build the tests use.
[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
slurm-wasm-sdk = {{ path = "{}", features = ["{kind}"] }}

# A project of its own, even when created inside another workspace.
[workspace]
"#,
        sdk.display()
    )
}

fn readme(package: &str, plugin_type: &str, template: &Template, crate_ident: &str) -> String {
    let wasm = format!("target/wasm32-wasip2/release/{crate_ident}.wasm");
    let slot = match template.kind {
        "gres" => format!("[plugins.gres.{}]", &plugin_type["gres/".len()..]),
        kind => format!("[plugins.{kind}]"),
    };
    let grants = if template.kind == "task" {
        "grants = [\"topology\", \"cpuset\"]\n"
    } else {
        ""
    };
    format!(
        "# {package}: the Slurm plugin `{plugin_type}` as a WebAssembly component\n\n\
         Made by `slurm-wasm new` from slurm-wasm's example: {}. Edit `src/lib.rs`; the SDK's\n\
         `{kind}::Plugin` trait gives every function you do not write the default of a Slurm\n\
         plugin that does nothing there.\n\n\
         ```sh\n\
         cargo test                                          # native: the contract functions on Export<P>\n\
         cargo build --release --target wasm32-wasip2        # the component\n\
         slurm-wasm check {wasm}    # the conformance suite\n\
         slurm-wasm inspect {wasm}\n\
         ```\n\n\
         In the simulator (priority and select plugins): `slurm-wasm simulate --policy \
         select/cons_tres,priority={wasm}`.\n\n\
         In Slurm, through slurm-wasm's shim plugins (its README, \"Running the plugins in \
         Slurm\"), the host configuration's slot:\n\n\
         ```toml\n\
         {slot}\n\
         wasm = \"/path/to/{crate_ident}.wasm\"\n\
         {grants}\
         ```\n",
        template.what,
        kind = template.kind,
    )
}
