//! `slurm-wasm new <kind> <name>`: a plugin project of its own, outside
//! this repository, that builds to a component with one command, passes
//! `check` unchanged and has a native test.
//!
//! In Rust (the default) the project is one of the small examples
//! (`examples/priority-small-first`, `examples/task-one-cpu`,
//! `examples/gres-count-only`, `examples/select-first-fit`, which CI builds
//! and checks as they are) with
//! the plugin's name put in: the type string, the Rust type and the crate
//! name. It depends on the SDK by path (the SDK of the checkout this binary
//! was built from, or `--sdk`).
//!
//! In Python (`--lang python`) and C (`--lang c`) the project carries a
//! copy of the contract (`wit/`) and the same four policies written in
//! that language, from `host/cli/templates/` (`examples/python-*` and
//! `examples/c-*` are two of them as `new` writes them): Python through
//! componentize-py, C through wit-bindgen's C generator, clang for
//! wasm32-wasi and `wasm-tools component new` with the WASI preview 1
//! adapter, which `new` writes into the project (the one of the wasmtime
//! release this binary runs plugins on). See docs/plugin-languages.md.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A template: the example's files and the names in it that the new
/// plugin's replace.
struct Template {
    /// What `new` is asked for: the kind, or `select-wrapper`.
    id: &'static str,
    /// The plugin kind it makes.
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

const TEMPLATES: [Template; 5] = [
    Template {
        id: "priority",
        kind: "priority",
        plugin_type: "priority/small_first",
        type_name: "SmallFirst",
        crate_ident: "priority_small_first",
        lib: include_str!("../../examples/priority-small-first/src/lib.rs"),
        test: include_str!("../../examples/priority-small-first/tests/small_first.rs"),
        what: "small jobs first, weighted by the partition's PriorityJobFactor",
    },
    Template {
        id: "task",
        kind: "task",
        plugin_type: "task/one_cpu",
        type_name: "OneCpu",
        crate_ident: "task_one_cpu",
        lib: include_str!("../../examples/task-one-cpu/src/lib.rs"),
        test: include_str!("../../examples/task-one-cpu/tests/one_cpu.rs"),
        what: "each task bound to one CPU of its step (grants: topology, cpuset)",
    },
    Template {
        id: "gres",
        kind: "gres",
        plugin_type: "gres/fpga",
        type_name: "Fpga",
        crate_ident: "gres_count_only",
        lib: include_str!("../../examples/gres-count-only/src/lib.rs"),
        test: include_str!("../../examples/gres-count-only/tests/fpga.rs"),
        what: "a count-only GRES whose jobs see SLURM_<NAME>_COUNT",
    },
    Template {
        id: "select",
        kind: "select",
        plugin_type: "select/first_fit",
        type_name: "FirstFit",
        crate_ident: "select_first_fit",
        lib: include_str!("../../examples/select-first-fit/src/lib.rs"),
        test: include_str!("../../examples/select-first-fit/tests/first_fit.rs"),
        what: "whole nodes, first fit; will-run from the running jobs' end times",
    },
    Template {
        id: "select-wrapper",
        kind: "select",
        plugin_type: "select/spare_bigmem",
        type_name: "SpareBigmem",
        crate_ident: "select_spare_bigmem",
        lib: include_str!("../../examples/select-spare-bigmem/src/lib.rs"),
        test: include_str!("../../examples/select-spare-bigmem/tests/spare.rs"),
        what: "a select wrapper over any select plugin: jobs not asking for bigmem kept off bigmem nodes while there is room elsewhere",
    },
];

/// The SDK of the checkout this binary was built from.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sdk");

/// The language of the project `new` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A cargo project on slurm-wasm-sdk.
    Rust,
    /// A componentize-py project (PyPI's componentize-py).
    Python,
    /// A make project: wit-bindgen's C bindings, clang for wasm32-wasi,
    /// wasm-tools.
    C,
}

/// What `new` was asked for.
pub struct NewRequest {
    pub kind: String,
    pub name: String,
    pub dir: Option<PathBuf>,
    pub sdk: Option<PathBuf>,
    pub lang: Lang,
}

/// Writes the project and prints what to do next.
///
/// # Errors
/// An unknown kind (or select in Python or C), a name that is not
/// `[a-z][a-z0-9_]*`, a directory that exists and is not empty, an SDK
/// directory without the SDK's Cargo.toml, or a file that cannot be
/// written.
pub fn run(request: NewRequest) -> Result<std::process::ExitCode> {
    let template = TEMPLATES
        .iter()
        .find(|t| t.id == request.kind)
        .with_context(|| {
            format!(
                "unknown kind `{}`: select, gres, priority or task (or select-wrapper: a select plugin over another)",
                request.kind
            )
        })?;
    let name = &request.name;
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        bail!("plugin name `{name}`: use lower-case letters, digits and `_`, starting with a letter (Slurm's plugin names, e.g. `fair_small`)");
    }
    let package = format!("{}-{}", template.id, name.replace('_', "-"));
    let dir = request.dir.unwrap_or_else(|| PathBuf::from(&package));
    if dir.exists() && std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_some()) {
        bail!(
            "{}: exists and is not empty; name a new directory with --dir",
            dir.display()
        );
    }
    if request.lang != Lang::Rust {
        return other_language(request.lang, template.id, name, &dir);
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
        ("Cargo.toml", cargo_toml(&package, template, &sdk)),
        ("src/lib.rs", fill(template.lib)),
        (&format!("tests/{name}.rs") as &str, fill(template.test)),
        (
            "README.md",
            readme(&package, &plugin_type, template, &crate_ident),
        ),
        (".gitignore", "/target\n".to_string()),
    ];
    for (file, text) in files {
        write(&dir, file, text.as_bytes())?;
    }
    println!(
        "created {plugin_type} in {} ({}); next:\n  cd {}\n  cargo test\n  cargo build --release --target wasm32-wasip2\n  slurm-wasm check target/wasm32-wasip2/release/{crate_ident}.wasm",
        dir.display(),
        template.what,
        dir.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// The project's manifest: the SDK with the kind's feature, and for a
/// select wrapper the wrapper crate beside the SDK.
fn cargo_toml(package: &str, template: &Template, sdk: &Path) -> String {
    let dependencies = if template.id == "select-wrapper" {
        format!(
            "slurm-wasm-sdk = {{ path = \"{}\" }}\nslurm-wasm-select-wrapper = {{ path = \"{}\" }}",
            sdk.display(),
            sdk.join("select-wrapper").display()
        )
    } else {
        format!(
            "slurm-wasm-sdk = {{ path = \"{}\", features = [\"{}\"] }}",
            sdk.display(),
            template.kind
        )
    };
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
{dependencies}

# A project of its own, even when created inside another workspace.
[workspace]
"#
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
    let (base, inner) = if template.id == "select-wrapper" {
        (
            "`slurm_wasm_select_wrapper::Wrapper` trait passes every function you do not write to\n\
             the inner plugin, unchanged",
            "[plugins.select.inner]\nbundled = \"select/cons_tres\"\n",
        )
    } else {
        (
            "the SDK's\n`{kind}::Plugin` trait gives every function you do not write the default of a Slurm\n\
             plugin that does nothing there",
            "",
        )
    };
    let base = base.replace("{kind}", template.kind);
    let simulate = simulate_line(template.id, &wasm);
    format!(
        "# {package}: the Slurm plugin `{plugin_type}` as a WebAssembly component\n\n\
         Made by `slurm-wasm new` from slurm-wasm's example: {}. Edit `src/lib.rs`; {base}.\n\n\
         ```sh\n\
         cargo test                                          # native: the contract functions on Export<P>\n\
         cargo build --release --target wasm32-wasip2        # the component\n\
         slurm-wasm check {wasm}    # the conformance suite\n\
         slurm-wasm inspect {wasm}\n\
         ```\n\n\
         {simulate}\
         In Slurm, through slurm-wasm's shim plugins (its README, \"Running the plugins in \
         Slurm\"), the host configuration's slot:\n\n\
         ```toml\n\
         {slot}\n\
         wasm = \"/path/to/{crate_ident}.wasm\"\n\
         {grants}\
         {inner}\
         ```\n",
        template.what,
    )
}

/// Writes `bytes` to `file` under `dir`, making the directories it needs.
fn write(dir: &Path, file: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// The contract, as the project's `wit/` carries it.
const WIT: [(&str, &str); 7] = [
    (
        "capabilities.wit",
        include_str!("../../wit/capabilities.wit"),
    ),
    ("gres.wit", include_str!("../../wit/gres.wit")),
    ("priority.wit", include_str!("../../wit/priority.wit")),
    ("select.wit", include_str!("../../wit/select.wit")),
    ("task.wit", include_str!("../../wit/task.wit")),
    ("types.wit", include_str!("../../wit/types.wit")),
    ("worlds.wit", include_str!("../../wit/worlds.wit")),
];

/// A Python or C template of one kind: its files (path in the project,
/// text) and the names in them that the new plugin's replace.
struct LangTemplate {
    /// `<kind>/<name>` of the template's plugin.
    plugin_type: &'static str,
    /// Its name alone, as C identifiers carry it.
    name: &'static str,
    /// Its Python class.
    class: &'static str,
    files: &'static [(&'static str, &'static str)],
}

const PYTHON_COMMON: [(&str, &str); 3] = [
    ("Makefile", include_str!("templates/python/Makefile")),
    (
        "slurm_plugin/__init__.py",
        include_str!("templates/python/slurm_plugin/__init__.py"),
    ),
    (
        "slurm_plugin/testkit.py",
        include_str!("templates/python/slurm_plugin/testkit.py"),
    ),
];

const PYTHON: [LangTemplate; 4] = [
    LangTemplate {
        plugin_type: "priority/small_first",
        name: "small_first",
        class: "SmallFirst",
        files: &[
            (
                "plugin.py",
                include_str!("templates/python/priority/plugin.py"),
            ),
            (
                "test_plugin.py",
                include_str!("templates/python/priority/test_plugin.py"),
            ),
            (
                "slurm_plugin/priority.py",
                include_str!("templates/python/slurm_plugin/priority.py"),
            ),
        ],
    },
    LangTemplate {
        plugin_type: "task/one_cpu",
        name: "one_cpu",
        class: "OneCpu",
        files: &[
            ("plugin.py", include_str!("templates/python/task/plugin.py")),
            (
                "test_plugin.py",
                include_str!("templates/python/task/test_plugin.py"),
            ),
            (
                "slurm_plugin/task.py",
                include_str!("templates/python/slurm_plugin/task.py"),
            ),
        ],
    },
    LangTemplate {
        plugin_type: "gres/fpga",
        name: "fpga",
        class: "Fpga",
        files: &[
            ("plugin.py", include_str!("templates/python/gres/plugin.py")),
            (
                "test_plugin.py",
                include_str!("templates/python/gres/test_plugin.py"),
            ),
            (
                "slurm_plugin/gres.py",
                include_str!("templates/python/slurm_plugin/gres.py"),
            ),
        ],
    },
    LangTemplate {
        plugin_type: "select/first_fit",
        name: "first_fit",
        class: "FirstFit",
        files: &[
            (
                "plugin.py",
                include_str!("templates/python/select/plugin.py"),
            ),
            (
                "test_plugin.py",
                include_str!("templates/python/select/test_plugin.py"),
            ),
            (
                "slurm_plugin/select.py",
                include_str!("templates/python/slurm_plugin/select.py"),
            ),
        ],
    },
];

const C_COMMON: [(&str, &str); 2] = [
    ("Makefile", include_str!("templates/c/Makefile")),
    (
        "src/slurm_plugin.h",
        include_str!("templates/c/slurm_plugin.h"),
    ),
];

/// The C files of one kind, under `templates/c/<kind>/`.
macro_rules! c_files {
    ($kind:literal) => {
        &[
            (
                "src/plugin.c",
                include_str!(concat!("templates/c/", $kind, "/plugin.c")),
            ),
            (
                "src/policy.c",
                include_str!(concat!("templates/c/", $kind, "/policy.c")),
            ),
            (
                "src/policy.h",
                include_str!(concat!("templates/c/", $kind, "/policy.h")),
            ),
            (
                "src/defaults.c",
                include_str!(concat!("templates/c/", $kind, "/defaults.c")),
            ),
            (
                "test/test_policy.c",
                include_str!(concat!("templates/c/", $kind, "/test_policy.c")),
            ),
        ]
    };
}

const C: [LangTemplate; 4] = [
    LangTemplate {
        plugin_type: "priority/small_first",
        name: "small_first",
        class: "SmallFirst",
        files: c_files!("priority"),
    },
    LangTemplate {
        plugin_type: "task/one_cpu",
        name: "one_cpu",
        class: "OneCpu",
        files: c_files!("task"),
    },
    LangTemplate {
        plugin_type: "gres/fpga",
        name: "fpga",
        class: "Fpga",
        files: c_files!("gres"),
    },
    LangTemplate {
        plugin_type: "select/first_fit",
        name: "first_fit",
        class: "FirstFit",
        files: c_files!("select"),
    },
];

/// The adapter `wasm-tools component new` turns a WASI preview 1 reactor
/// into a component with: the one of the wasmtime release slurm-wasm runs
/// plugins on.
const ADAPTER: (&str, &[u8]) = (
    "wasi_snapshot_preview1.reactor.wasm",
    wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
);

/// Writes a Python or C project of `kind` for plugin `name` in `dir`, and
/// prints what to do next.
fn other_language(
    lang: Lang,
    kind: &str,
    name: &str,
    dir: &Path,
) -> Result<std::process::ExitCode> {
    let (templates, common): (&[LangTemplate], &[(&str, &str)]) = match lang {
        Lang::Python => (&PYTHON, &PYTHON_COMMON),
        _ => (&C, &C_COMMON),
    };
    let Some(template) = templates
        .iter()
        .find(|t| t.plugin_type.starts_with(&format!("{kind}/")))
    else {
        bail!(
            "no {kind} template in {} yet: `--lang rust` (the default) makes one; \
             docs/plugin-languages.md says how the contract's {kind} world works from there",
            match lang {
                Lang::Python => "Python",
                _ => "C",
            }
        );
    };
    let plugin_type = format!("{kind}/{name}");
    let project = format!("{kind}_{name}");
    let class: String = name
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| w[..1].to_ascii_uppercase() + &w[1..])
        .collect();
    let old_project = template.plugin_type.replace('/', "_");
    let pairs = [
        ("@TYPE@".to_string(), plugin_type.clone()),
        ("@NAME@".to_string(), project.clone()),
        ("@WORLD@".to_string(), format!("{kind}-plugin")),
        ("@BINDINGS@".to_string(), format!("{kind}_plugin")),
        // Longest first: the template's type and project name hold its
        // bare name.
        (template.plugin_type.to_string(), plugin_type.clone()),
        (old_project, project.clone()),
        (template.class.to_string(), class.clone()),
        (
            template.name.to_ascii_uppercase(),
            name.to_ascii_uppercase(),
        ),
        (template.name.to_string(), name.to_string()),
    ];
    // Each name through a marker of its own, so that a new name holding an
    // old one (`fpga2`) is not replaced again.
    let fill = |text: &str| {
        let marked = pairs
            .iter()
            .enumerate()
            .fold(text.to_string(), |t, (i, (old, _))| {
                t.replace(old.as_str(), &format!("\u{1}{i}\u{1}"))
            });
        pairs.iter().enumerate().fold(marked, |t, (i, (_, new))| {
            t.replace(&format!("\u{1}{i}\u{1}"), new)
        })
    };
    for (file, text) in common.iter().chain(template.files) {
        write(dir, file, fill(text).as_bytes())?;
    }
    for (file, text) in WIT {
        write(dir, &format!("wit/{file}"), text.as_bytes())?;
    }
    let wasm = format!("build/{project}.wasm");
    let readme = lang_readme(lang, kind, &plugin_type, &wasm);
    write(dir, "README.md", readme.as_bytes())?;
    let (ignore, build) = match lang {
        Lang::Python => {
            let app = format!(
                "\"\"\"The component's exports (componentize-py's `app` module): the plugin\n\
                 of plugin.py behind the contract's functions. Nothing to edit here.\"\"\"\n\
                 from plugin import {class}\n\
                 from slurm_plugin.{kind} import exports\n\n\
                 WitWorld, {} = exports({class})\n",
                kind[..1].to_ascii_uppercase() + &kind[1..]
            );
            write(dir, "app.py", app.as_bytes())?;
            (
                "/build/\n__pycache__/\n",
                "make test    # the native test (needs componentize-py: pip install componentize-py==0.25.1)\n  make         # the component",
            )
        }
        _ => {
            write(dir, ADAPTER.0, ADAPTER.1)?;
            (
                "/build/\n",
                "make test    # the policy's native test (cc)\n  make         # the component (clang for wasm32-wasi, wit-bindgen, wasm-tools: see README.md)",
            )
        }
    };
    write(dir, ".gitignore", ignore.as_bytes())?;
    println!(
        "created {plugin_type} in {} ({}); next:\n  cd {}\n  {build}\n  slurm-wasm check {wasm}",
        dir.display(),
        match lang {
            Lang::Python => "Python",
            _ => "C",
        },
        dir.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// The README of a Python or C project.
fn lang_readme(lang: Lang, kind: &str, plugin_type: &str, wasm: &str) -> String {
    let (what, tools, edit, test) = match lang {
        Lang::Python => (
            "Python, built with componentize-py",
            "Python 3.11 or later and componentize-py (`pip install componentize-py==0.25.1`)",
            "Edit `plugin.py` (the policy: a class deriving from `slurm_plugin.KIND.Plugin`, \
             which gives every function you do not write the default of a Slurm plugin \
             that does nothing there) and `test_plugin.py`. Every module the plugin uses \
             must be imported at the top of a file: the component keeps the modules \
             componentize-py imported while it built it, and has no file system to \
             import others from.",
            "the native test (unittest, on the bindings componentize-py generates)",
        ),
        _ => (
            "C, built with wit-bindgen's C generator, clang and wasm-tools",
            "clang and lld with a wasm32-wasi sysroot (Debian: `apt-get install clang lld \
             wasi-libc libclang-rt-14-dev-wasm32`), wit-bindgen-cli 0.61 and wasm-tools \
             (`cargo install --locked wit-bindgen-cli@0.61.1 wasm-tools@1.258.0`)",
            "Edit `src/policy.c` (the policy, which the native test calls) and \
             `src/plugin.c` (the contract's functions the policy needs). `src/defaults.c` \
             gives every other function, as a weak definition, the default of a Slurm \
             plugin that does nothing there: write the same function in `plugin.c` to \
             replace it. A function owns its arguments (free them with the bindings' \
             `*_free`), and what it returns must come from `malloc`.",
            "the policy's native test (the host's `cc`)",
        ),
    };
    let slot = match kind {
        "gres" => format!("[plugins.gres.{}]", &plugin_type["gres/".len()..]),
        kind => format!("[plugins.{kind}]"),
    };
    let grants = if kind == "task" {
        "grants = [\"topology\", \"cpuset\"]\n"
    } else {
        ""
    };
    let simulate = simulate_line(kind, wasm);
    format!(
        "# {plugin_type}: a Slurm plugin as a WebAssembly component, in {what}\n\n\
         Made by `slurm-wasm new {kind} {name} --lang {lang}`. Needs {tools}.\n\n\
         {edit}\n\n\
         ```sh\n\
         make test                     # {test}\n\
         make                          # the component, {wasm}\n\
         make check                    # slurm-wasm check {wasm}: the conformance suite\n\
         slurm-wasm inspect {wasm}\n\
         ```\n\n\
         `wit/` is the contract (`slurm:plugin@0.1.0`) as the slurm-wasm that made this \
         project defines it.\n\n\
         {simulate}\
         In Slurm, through slurm-wasm's shim plugins (its README, \"Running the plugins in \
         Slurm\"), the host configuration's slot:\n\n\
         ```toml\n\
         {slot}\n\
         wasm = \"/path/to/{file}\"\n\
         {grants}\
         ```\n",
        edit = edit.replace("KIND", kind),
        name = &plugin_type[kind.len() + 1..],
        lang = match lang {
            Lang::Python => "python",
            _ => "c",
        },
        file = &wasm["build/".len()..],
    )
}

/// The README's line on running a plugin of `kind`, built to `wasm`, in
/// the simulator (empty for the kinds `simulate` does not take).
fn simulate_line(id: &str, wasm: &str) -> String {
    match id {
        "priority" => format!(
            "In the simulator: `slurm-wasm simulate --policy select/cons_tres,priority={wasm}`.\n\n"
        ),
        "select" => format!(
            "In the simulator, against select/linear: `slurm-wasm simulate --policy \
             select/linear,priority/basic --policy select={wasm},priority/basic`.\n\n"
        ),
        "select-wrapper" => format!(
            "In the simulator, against select/cons_tres alone: `slurm-wasm simulate --policy \
             select/cons_tres,priority/basic --policy select={wasm}+select/cons_tres,priority/basic`.\n\n"
        ),
        _ => String::new(),
    }
}
