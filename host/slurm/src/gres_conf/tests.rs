use super::*;
use crate::slurm_conf::{self, SlurmConf};
use slurm_wasm_host::fixtures::bits;

/// Two nodes of 2 sockets x 4 cores x 2 threads, with GPUs and MPS.
const SLURM: &str = "ClusterName=c\nGresTypes=gpu,mps\n\
    NodeName=g[1-2] Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 Gres=gpu:tesla:4,mps:400\n\
    PartitionName=p Nodes=ALL\n";

fn slurm() -> SlurmConf {
    slurm_conf::parse_str(SLURM, Path::new("/etc/slurm/slurm.conf")).unwrap()
}

fn parse(text: &str) -> GresConfFile {
    parse_str(text, Path::new("/etc/slurm/gres.conf")).unwrap_or_else(|e| panic!("{e}"))
}

fn node(text: &str, name: &str) -> Result<NodeGres, String> {
    let conf = slurm();
    let node = &conf.nodes[conf.node_index(name).unwrap()];
    parse(text)
        .node(node, &conf.gres_types())
        .map_err(|e| e.to_string())
}

fn error(text: &str) -> String {
    match parse_str(text, Path::new("gres.conf")) {
        Ok(file) => panic!("accepted: {file:?}"),
        Err(e) => e.to_string(),
    }
}

fn group(g: &GresDeviceGroup) -> (&str, Option<&str>, u64, Option<Vec<u32>>, &[i32]) {
    (
        g.name.as_str(),
        g.type_name.as_deref(),
        g.count,
        g.cores.as_ref().map(bits),
        &g.links,
    )
}

#[test]
fn node_lines_give_records_and_device_groups() {
    // gres.conf man page layout: typed GPUs per socket, keys in any case,
    // comments, a continued line; expectations from `_parse_gres_config`
    // (common/gres.c) and gres.conf(5)
    // (File hostlists, Count defaults to the number of files, Cores are
    // core indices of the node: 8 cores here).
    let text = "# GPUs of the g nodes\n\
        NodeName=g[1-2] name=gpu Type=tesla File=/dev/nvidia[0-1] Cores=0-3  # socket 0\n\
        NodeName=g[1-2] Name=gpu Type=tesla \\\n  FILE=/dev/nvidia[2-3] CPUs=4-7 Flags=nvidia_gpu_env\n\
        NodeName=g1 Name=mps Count=400\n";
    let g1 = node(text, "g1").unwrap();
    assert_eq!(g1.auto_detect, None);
    let records: Vec<_> = g1
        .records
        .iter()
        .map(|r| {
            (
                r.origin.as_str(),
                r.name.as_str(),
                r.files.clone(),
                r.count,
                r.cores.as_ref().map(bits),
                r.flags.clone(),
            )
        })
        .collect();
    assert_eq!(
        records,
        [
            (
                "/etc/slurm/gres.conf:2",
                "gpu",
                vec!["/dev/nvidia0".to_owned(), "/dev/nvidia1".to_owned()],
                2,
                Some(vec![0, 1, 2, 3]),
                vec![]
            ),
            (
                "/etc/slurm/gres.conf:3",
                "gpu",
                vec!["/dev/nvidia2".to_owned(), "/dev/nvidia3".to_owned()],
                2,
                Some(vec![4, 5, 6, 7]),
                vec!["nvidia_gpu_env".to_owned()]
            ),
            ("/etc/slurm/gres.conf:5", "mps", vec![], 400, None, vec![]),
        ]
    );
    assert_eq!(g1.records_for("mps").len(), 1);
    assert_eq!(g1.records[0].type_name.as_deref(), Some("tesla"));
    // MPS without File spreads over the four GPUs, 100 each, taking each
    // GPU's cores (`_distribute_count`, gres/common/gres_c_s.c).
    let groups: Vec<_> = g1.topology.iter().map(group).collect();
    let socket0 = Some(vec![0, 1, 2, 3]);
    let socket1 = Some(vec![4, 5, 6, 7]);
    assert_eq!(
        groups,
        [
            ("gpu", Some("tesla"), 2, socket0.clone(), &[][..]),
            ("gpu", Some("tesla"), 2, socket1.clone(), &[][..]),
            ("mps", None, 100, socket0.clone(), &[][..]),
            ("mps", None, 100, socket0, &[][..]),
            ("mps", None, 100, socket1.clone(), &[][..]),
            ("mps", None, 100, socket1, &[][..]),
        ]
    );
    // The MPS line names g1 only.
    let g2 = node(text, "g2").unwrap();
    assert_eq!(g2.records.len(), 2);
    assert_eq!(g2.topology.len(), 2);
}

#[test]
fn shares_are_spread_as_slurm_spreads_them() {
    // _distribute_count (gres/common/gres_c_s.c): share_i = remaining /
    // gpus_left, so 301
    // over 2 GPUs is 150 then 151.
    let text = "Name=gpu File=/dev/nvidia[0-1]\nName=mps Count=301\n";
    let counts: Vec<u64> = node(text, "g1")
        .unwrap()
        .topology
        .iter()
        .filter(|g| g.name == "mps")
        .map(|g| g.count)
        .collect();
    assert_eq!(counts, [150, 151]);
    // With File, the MPS line's count is spread over its own files, and a
    // K suffix multiplies by 1024 (Count in gres.conf(5)).
    let text = "Name=mps Count=2K File=/dev/nvidia[0-1]\n";
    let counts: Vec<u64> = node(text, "g1")
        .unwrap()
        .topology
        .iter()
        .map(|g| g.count)
        .collect();
    assert_eq!(counts, [1024, 1024]);
}

#[test]
fn links_and_multiple_files() {
    // Links (gres.conf(5), `gres_links_validate` in common/gres.c): one
    // device per line, -1 marks the device itself.
    // MultipleFiles: several files forming one device, count 1.
    let text = "Name=gpu File=/dev/nvidia0 Links=-1,2\n\
        Name=gpu File=/dev/nvidia1 Links=2,-1\n\
        Name=gpu MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap21\n";
    let g1 = node(text, "g1").unwrap();
    let groups: Vec<_> = g1.topology.iter().map(group).collect();
    assert_eq!(
        groups,
        [
            ("gpu", None, 1, None, &[-1, 2][..]),
            ("gpu", None, 1, None, &[2, -1][..]),
            ("gpu", None, 1, None, &[][..]),
        ]
    );
    assert_eq!(g1.records[0].links.as_deref(), Some("-1,2"));
    assert_eq!(g1.records[2].files.len(), 2);
    assert_eq!(g1.records[2].count, 1);
}

#[test]
fn auto_detect_node_value_wins_over_global() {
    // AutoDetect (`_handle_global_autodetect`, `_handle_local_autodetect`,
    // common/gres.c): global line or per node, node value wins.
    let text = "AutoDetect=NVML\nNodeName=g2 AutoDetect=off\nName=gpu\n";
    assert_eq!(
        node(text, "g1").unwrap().auto_detect.as_deref(),
        Some("nvml")
    );
    assert_eq!(
        node(text, "g2").unwrap().auto_detect.as_deref(),
        Some("off")
    );
    let text = "NodeName=g1 AutoDetect=rsmi\nAutoDetect=nvml\n";
    assert_eq!(
        node(text, "g1").unwrap().auto_detect.as_deref(),
        Some("rsmi")
    );
}

#[test]
fn count_defaults() {
    // Count (`_parse_gres_config`, common/gres.c): defaults to the number of
    // files; 1 without files.
    let file = parse("Name=gpu File=/dev/nvidia[0-3]\nName=gpu Type=x\n");
    assert_eq!(file.lines[0].count, 4);
    assert_eq!(file.lines[1].count, 1);
    assert_eq!(file.lines[0].nodes, None);
}

#[test]
fn per_node_errors_name_the_line() {
    assert_eq!(
        node("Name=gpu\nName=nic Count=1\n", "g1").unwrap_err(),
        "/etc/slurm/gres.conf:2: Name=nic: not in slurm.conf GresTypes (gpu,mps)"
    );
    assert_eq!(
        node("Name=gpu File=/dev/nvidia0 Cores=8\n", "g1").unwrap_err(),
        "/etc/slurm/gres.conf:1: Cores: core 8 is outside node g1, which has 8 cores \
         (2 sockets x 4 cores); expected indices 0-7"
    );
    assert_eq!(
        node(
            "NodeName=g1 Name=gpu File=/dev/nvidia[0-1]\nName=gpu File=/dev/nvidia1\n",
            "g1"
        )
        .unwrap_err(),
        "/etc/slurm/gres.conf:2: File /dev/nvidia1 of gpu on node g1 is already listed at \
         /etc/slurm/gres.conf:1"
    );
    // The same file for gpu and mps is how MPS names its GPU: allowed.
    assert!(node(
        "Name=gpu File=/dev/nvidia0\nName=mps File=/dev/nvidia0\n",
        "g1"
    )
    .is_ok());
    // The duplicate only matters on the node holding both lines.
    assert!(node(
        "NodeName=g1 Name=gpu File=/dev/nvidia0\nNodeName=g2 Name=gpu File=/dev/nvidia0\n",
        "g2"
    )
    .is_ok());
    assert_eq!(
        node(
            "Name=mps File=/dev/nvidia0 Count=100\nName=mps Count=100\n",
            "g1"
        )
        .unwrap_err(),
        "/etc/slurm/gres.conf:2: mps on node g1: lines without File= cannot be mixed with \
         lines with File= (as at /etc/slurm/gres.conf:1)"
    );
}

#[test]
fn syntax_errors_name_file_line_and_expectation() {
    let cases = [
        (
            "\nName=gpu File\n",
            "gres.conf:2: expected Key=Value, found `File`",
        ),
        (
            "Name=gpu Model=a100\n",
            "gres.conf:1: unknown key `Model`; expected one of AutoDetect, Cores, CPUs, Count, \
             File, Files, Flags, Links, MultipleFiles, Name, NodeName, Type",
        ),
        (
            "Name=gpu File=/dev/a Files=/dev/b\n",
            "gres.conf:1: File given twice on one line",
        ),
        (
            "Name=gpu Cores=1 CPUs=2\n",
            "gres.conf:1: Cores given twice on one line",
        ),
        (
            "NodeName=g1 Type=a100\n",
            "gres.conf:1: Type= needs a Name= on its line",
        ),
        (
            "AutoDetect=cuda\n",
            "gres.conf:1: AutoDetect=`cuda`: expected one of nvml, nvidia, rsmi, oneapi, nrt, \
             full, off",
        ),
        (
            "NodeName=g[1-\n",
            "gres.conf:1: NodeName=`g[1-`: `[` at column 2 is never closed",
        ),
        (
            "Name=gpu File=/dev/nvidia[3-1]\n",
            "gres.conf:1: File=`/dev/nvidia[3-1]`: range `3-1` is reversed",
        ),
        (
            "Name=gpu File=/dev/nvidia[0-1024]\n",
            "gres.conf:1: File=`/dev/nvidia[0-1024]` lists 1025 files; at most 1024 are allowed",
        ),
        (
            "Name=mps Count=lots\n",
            "gres.conf:1: Count=`lots`: expected a number with an optional K, M, G, T or P suffix",
        ),
        (
            "Name=mps Count=99999999999P\n",
            "gres.conf:1: Count=`99999999999P`: expected a number with an optional K, M, G, T \
             or P suffix",
        ),
        (
            "Name=gpu File=/dev/nvidia[0-1] Count=4\n",
            "gres.conf:1: Count=4 does not match the 2 device(s) of its File",
        ),
        (
            "Name=gpu File=/dev/a MultipleFiles=/dev/b\n",
            "gres.conf:1: File and MultipleFiles exclude each other; give one",
        ),
        (
            "Name=gpu Cores=3-1\n",
            "gres.conf:1: Cores=`3-1`: expected core indices below 65535 and ranges, like 0-1,4",
        ),
        (
            "Name=gpu Cores=0,,1\n",
            "gres.conf:1: Cores=`0,,1`: expected core indices below 65535 and ranges, like 0-1,4",
        ),
        (
            "Name=gpu File=/dev/nvidia0 Links=-1,-3\n",
            "gres.conf:1: Links=`-1,-3`: `-3` is not a link count; expected integers of -2 or \
             more, like -1,2,0,2",
        ),
        (
            "Name=gpu File=/dev/nvidia[0-1] Links=-1,2\n",
            "gres.conf:1: Links describes one device, but the line has 2; give one File per line",
        ),
        (
            "Name=gpu Flags=nvidia_gpu_env,cuda_env\n",
            "gres.conf:1: Flags: unknown flag `cuda_env`; expected CountOnly, explicit, \
             one_sharing, all_sharing, env_uuid, nvidia_gpu_env, amd_gpu_env, intel_gpu_env, \
             opencl_env, no_gpu_env",
        ),
        (
            "Name=\"\" Count=1\n",
            "gres.conf:1: Name: expected a GRES name, like gpu",
        ),
        (
            "Name=gpu File=\"/dev/nvidia0\n",
            "gres.conf:1: File: unterminated quoted value",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text), expected, "for {text:?}");
    }
    assert_eq!(
        load(Path::new("/nonexistent/gres.conf"))
            .unwrap_err()
            .to_string(),
        "/nonexistent/gres.conf: cannot read: No such file or directory (os error 2)"
    );
}

#[test]
fn flags_are_case_insensitive_and_canonical() {
    // Flags (`gres_flags_parse`, common/gres.c): keywords are
    // case-insensitive; the records carry the
    // spelling the contract documents (`CountOnly`, `nvidia_gpu_env`).
    let file = parse("Name=gpu Flags=countonly,NVIDIA_GPU_ENV\n");
    assert_eq!(file.lines[0].flags, ["CountOnly", "nvidia_gpu_env"]);
}

#[test]
fn default_path_is_next_to_slurm_conf() {
    assert_eq!(
        default_path(Path::new("/etc/slurm/slurm.conf")),
        Path::new("/etc/slurm/gres.conf")
    );
    assert_eq!(
        default_path(Path::new("slurm.conf")),
        Path::new("gres.conf")
    );
}

// Issue 26, class 6: `File=` was expanded before its 1024-file check, so
// a long path times a million was built first (and 2^20 files drew the
// hostlist's error instead of the file count). Now the files are counted
// from the ranges and refused before anything is expanded.
#[test]
fn files_are_counted_before_they_are_expanded() {
    assert_eq!(
        error("Name=gpu File=/dev/nvidia[0-1048575]\n"),
        "gres.conf:1: File=`/dev/nvidia[0-1048575]` lists 1048576 files; at most 1024 are allowed"
    );
    let path = format!("/dev/{}", "d".repeat(40));
    assert_eq!(
        error(&format!("Name=gpu MultipleFiles={path}[0-999999]\n")),
        format!(
            "gres.conf:1: MultipleFiles=`{path}[0-999999]` lists 1000000 files; at most 1024 \
             are allowed"
        )
    );
}

// Issue 26, class 6: the hostlists and core lists of a file are bounded
// together, not only one line at a time (before: each line alone).
#[test]
fn a_file_is_bounded_as_a_whole() {
    // Two lines of 16,000 names of 4005 bytes: each fits in 64 MiB, both
    // do not.
    let long = "n".repeat(4000);
    let line = format!("NodeName={long}[10000-25999] Name=gpu\n");
    let e = error(&line.repeat(2));
    assert!(
        e.starts_with(&format!(
            "gres.conf:2: NodeName=`{long}[10000-25999]`: together with"
        )),
        "{e}"
    );
    // 64 lines of 65,535 cores fit in 2^22 core indices; the 65th does not.
    let e = error(&"Name=gpu Cores=0-65534\n".repeat(65));
    assert_eq!(
        e,
        "gres.conf:65: Cores: with the lines before it, the file's Cores= lists name more than \
         4194304 cores in all"
    );
    // A range written a hundred thousand times is read once (before: 6.5
    // billion indices).
    let file = parse(&format!(
        "Name=gpu Cores={}0-65534\n",
        "0-65534,".repeat(100_000)
    ));
    assert_eq!(file.lines[0].cores.as_ref().map(Vec::len), Some(65_535));
    let file = parse("Name=gpu Cores=9,0-2,1-4,7,8-8,3\n");
    assert_eq!(file.lines[0].cores, Some(vec![0, 1, 2, 3, 4, 7, 8, 9]));
}

// Issue 26, class 6: what a node's records would take is estimated before
// they are built (before: 300 core bitmaps of 16 MiB each, built).
#[test]
fn records_are_bounded_before_they_are_built() {
    let conf = slurm_conf::parse_str(
        "GresTypes=gpu\nNodeName=wide Sockets=65535 CoresPerSocket=2048 CPUs=65535\n",
        Path::new("slurm.conf"),
    )
    .unwrap();
    let file = parse(&"Name=gpu Cores=0\n".repeat(300));
    let e = file.node(&conf.nodes[0], &conf.gres_types()).unwrap_err();
    assert_eq!(e.line, 6, "{e}");
    assert!(
        e.message.starts_with(
            "the records and device groups gres.conf gives the cluster's nodes would take more \
             than 268435456 bytes with this line"
        ),
        "{e}"
    );
    assert!(file.nodes(&conf).is_err());
}

proptest::proptest! {
    /// `nodes` finds each node's lines through an index; it answers what
    /// `node` answers for each node alone.
    #[test]
    fn nodes_answers_what_node_answers(lines in proptest::collection::vec(
        (
            proptest::sample::select(vec!["", "NodeName=g1 ", "NodeName=g2 ", "NodeName=g[1-2] ", "NodeName=g[2,2,1] ", "NodeName=x9 "]),
            proptest::sample::select(vec![
                "Name=gpu File=/dev/nvidia0", "Name=gpu File=/dev/nvidia[1-2] Cores=0-3",
                "Name=mps Count=100", "Name=mps File=/dev/nvidia[0-1] Count=200",
                "AutoDetect=nvml", "AutoDetect=off", "Name=gpu Count=1 AutoDetect=rsmi",
            ]),
        ),
        0..8,
    )) {
        let text: String = lines.iter().map(|(nodes, rest)| format!("{nodes}{rest}\n")).collect();
        let file = parse(&text);
        let conf = slurm();
        let one_by_one: Result<Vec<_>, _> = conf
            .nodes
            .iter()
            .map(|n| file.node(n, &conf.gres_types()))
            .collect();
        let show = |r: Result<Vec<NodeGres>, ConfError>| r.map(|v| format!("{v:?}")).map_err(|e| e.to_string());
        proptest::prop_assert_eq!(show(file.nodes(&conf)), show(one_by_one));
    }
}

proptest::proptest! {
    /// No input makes the parser or the per-node checks panic.
    #[test]
    fn gres_conf_shaped_text_never_panics(parts in proptest::collection::vec(
        proptest::sample::select(vec![
            "Name=gpu", "name=mps", "Name=nic", "Name=", "Type=a100", "File=/dev/nvidia[0-3]",
            "File=/dev/nvidia[0-", "Files=/dev/nvidia1", "MultipleFiles=/dev/a,/dev/b",
            "Count=4", "Count=2K", "Count=", "Count=-1", "Cores=0-3", "Cores=9", "CPUs=1-",
            "Links=-1,2", "Links=-3", "Flags=explicit", "Flags=x", "AutoDetect=nvml",
            "AutoDetect=", "NodeName=g1", "NodeName=g[1-2]", "NodeName=[", "=", "#", "\\",
            "\n", " ", "x", "Name=gpu File=/dev/nvidia0", "Count=0",
        ]),
        0..24,
    )) {
        let text = parts.join(" ");
        if let Ok(file) = parse_str(&text, Path::new("gres.conf")) {
            let conf = slurm();
            for node in &conf.nodes {
                let _ = file.node(node, &conf.gres_types());
            }
        }
    }

    /// Issue 26, class 6: generated files with ranges from tiny to
    /// enormous are refused or kept within the file's bounds.
    #[test]
    fn generated_files_stay_within_the_bounds(lines in proptest::collection::vec(
        (
            proptest::sample::select(vec![
                "", "NodeName=g[1-2] ", "NodeName=n[1-99999] ", "NodeName=n[0-99999999999] ",
                "NodeName=x[1-9][1-999] ",
            ]),
            proptest::sample::select(vec![
                "Name=gpu", "Name=gpu File=/dev/nvidia[0-1023]", "Name=gpu File=/dev/nvidia[0-1024]",
                "Name=mps Count=400", "Name=gpu Cores=0-65534", "Name=gpu Cores=0-65535",
                "Name=gpu MultipleFiles=/dev/a[0-99999999]",
            ]),
        ),
        0..12,
    )) {
        let text: String = lines.iter().map(|(nodes, rest)| format!("{nodes}{rest}\n")).collect();
        if let Ok(file) = parse_str(&text, Path::new("gres.conf")) {
            let names: usize = file.lines.iter().map(|l| l.nodes.as_ref().map_or(0, Vec::len) + l.files.len()).sum();
            let cores: usize = file.lines.iter().map(|l| l.cores.as_ref().map_or(0, Vec::len)).sum();
            proptest::prop_assert!(names <= MAX_LISTED_NAMES);
            proptest::prop_assert!(cores <= MAX_CORE_INDICES);
            proptest::prop_assert!(file.lines.iter().all(|l| l.files.len() <= MAX_FILES));
        }
    }

    /// Arbitrary text neither.
    #[test]
    fn any_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse_str(&text, Path::new("gres.conf"));
    }
}

#[test]
fn anchor_cluster_gres_conf() {
    // The gres.conf and slurm.conf of the real Slurm 22.05 cluster the
    // select anchors were recorded on (tests/fixtures/anchor/select): two
    // GPUs per n node, one per socket (2 sockets x 2 cores), 100 MPS
    // shares each; MPS takes the cores of the GPU with its file
    // (`_merge_lists`, gres/common/gres_c_s.c).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/anchor/select/cons_tres-CR_Core_Memory");
    let conf = slurm_conf::load(&dir.join("slurm.conf")).unwrap();
    let file = load(&default_path(&conf.path)).unwrap();
    let n1 = &conf.nodes[conf.node_index("n1").unwrap()];
    let gres = file.node(n1, &conf.gres_types()).unwrap();
    assert_eq!(gres.auto_detect.as_deref(), Some("off"));
    let groups: Vec<_> = gres.topology.iter().map(group).collect();
    assert_eq!(
        groups,
        [
            ("gpu", None, 1, Some(vec![0, 1]), &[][..]),
            ("gpu", None, 1, Some(vec![2, 3]), &[][..]),
            ("mps", None, 100, Some(vec![0, 1]), &[][..]),
            ("mps", None, 100, Some(vec![2, 3]), &[][..]),
        ]
    );
    assert_eq!(
        gres.records_for("gpu")[1].origin,
        format!("{}:3", dir.join("gres.conf").display())
    );
    let h1 = &conf.nodes[conf.node_index("h1").unwrap()];
    let none = file.node(h1, &conf.gres_types()).unwrap();
    assert!(none.records.is_empty() && none.topology.is_empty());
    assert_eq!(none.auto_detect.as_deref(), Some("off"));
}

#[test]
fn counts_take_slurms_unit_suffixes() {
    // suffix_mult (slurm_protocol_defs.c), which gres.c applies to `Count=`
    // and to slurm.conf's `Gres=name:count`: binary for k/kib..p/pib,
    // decimal for kb..pb, any case; anything else refuses the count.
    for (text, count) in [
        ("4", 4),
        ("2K", 2048),
        ("2k", 2048),
        ("1MiB", 1 << 20),
        ("3kb", 3000),
        ("1GB", 1_000_000_000),
        ("1p", 1 << 50),
    ] {
        assert_eq!(parse_count(text), Some(count), "{text}");
    }
    for text in ["", "K", "4x", "4 K", "-4", "99999999999P"] {
        assert_eq!(parse_count(text), None, "{text}");
    }
}

#[test]
fn read_as_slurm_reads_its_configuration_files() {
    // 22.05 reads gres.conf with s_p_parse_file (common/gres.c
    // `_parse_gres_config`), as slurm.conf: spaces around `=`, quoted
    // values, `\#` for a `#`, continued lines and `Include` (relative to
    // the including file).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gpus.conf"),
        "NodeName=g1 Name=gpu File=\"/dev/nvidia[0-1]\" Cores=0-3 # both on socket 0\n",
    )
    .unwrap();
    let path = dir.path().join("gres.conf");
    std::fs::write(
        &path,
        "Include gpus.conf\nNodeName = g1 Name = mps \\\n  Count=200\n",
    )
    .unwrap();
    let file = load(&path).unwrap();
    let lines: Vec<(String, usize, &str, u64)> = file
        .lines
        .iter()
        .map(|l| {
            (
                l.origin
                    .file
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                l.origin.line,
                l.name.as_str(),
                l.count,
            )
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            ("gpus.conf".to_owned(), 1, "gpu", 2),
            ("gres.conf".to_owned(), 2, "mps", 200),
        ]
    );
}
