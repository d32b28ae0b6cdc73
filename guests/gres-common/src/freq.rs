//! `--gpu-freq` parsing and resolution against a GPU's supported clocks
//! (Slurm 22.05.8 src/plugins/gpu/common/gpu_common.c `gpu_common_parse_gpu_freq` and
//! `gpu_common_get_nearest_freq`, which the NVML plugin's `gpu_p_step_hardware_init` uses
//! when src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_init` hands it the step).

/// A requested clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreqValue {
    Low,
    Medium,
    High,
    /// One step below high.
    HighM1,
    /// A frequency in MHz.
    Mhz(u32),
}

impl FreqValue {
    /// `low|medium|high|highm1` (case-insensitive) or a positive MHz number.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        match t.to_ascii_lowercase().as_str() {
            "low" => Some(FreqValue::Low),
            "medium" => Some(FreqValue::Medium),
            "high" => Some(FreqValue::High),
            "highm1" => Some(FreqValue::HighM1),
            _ => t.parse::<u32>().ok().filter(|v| *v > 0).map(FreqValue::Mhz),
        }
    }

    /// Resolves against `supported` (MHz, highest first): low → last,
    /// medium → entry `(n-1)/2`, high → first, highm1 → second (first when
    /// there is one), a number above the maximum → the maximum, below the
    /// minimum → the minimum, otherwise the lowest supported value not below
    /// it (exact values are kept, others rounded up). None when `supported`
    /// is empty.
    pub fn resolve(self, supported: &[u32]) -> Option<u32> {
        let n = supported.len();
        if n == 0 {
            return None;
        }
        Some(match self {
            FreqValue::Low => supported[n - 1],
            FreqValue::Medium => supported[(n - 1) / 2],
            FreqValue::High => supported[0],
            FreqValue::HighM1 => supported[usize::from(n > 1)],
            FreqValue::Mhz(v) => {
                let max = supported.iter().copied().max().unwrap_or(v);
                let min = supported.iter().copied().min().unwrap_or(v);
                if v >= max {
                    max
                } else if v <= min {
                    min
                } else {
                    supported
                        .iter()
                        .copied()
                        .filter(|s| *s >= v)
                        .min()
                        .unwrap_or(max)
                }
            }
        })
    }
}

/// A parsed `--gpu-freq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuFreq {
    /// Graphics clock (a value without `memory=`).
    pub graphics: Option<FreqValue>,
    pub memory: Option<FreqValue>,
    pub verbose: bool,
}

/// The GPU part of a step's `TresFreq`: the text after `gpu:` up to `;`
/// (`gpu:medium,memory=high`). None when there is none or it is empty.
pub fn gpu_part(tres_freq: &str) -> Option<&str> {
    let at = tres_freq.find("gpu:")?;
    let rest = &tres_freq[at + 4..];
    let part = rest.split(';').next().unwrap_or_default().trim();
    (!part.is_empty()).then_some(part)
}

impl GpuFreq {
    /// Parses `[<type>=]<value>[,<type>=<value>][,verbose]`. Returns the
    /// request and the tokens it ignored (Slurm logs them at debug level).
    pub fn parse(spec: &str) -> (GpuFreq, Vec<String>) {
        let mut out = GpuFreq::default();
        let mut ignored = Vec::new();
        for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if token.eq_ignore_ascii_case("verbose") {
                out.verbose = true;
                continue;
            }
            let parsed = match token.split_once('=') {
                Some((kind, value)) if kind.trim().eq_ignore_ascii_case("memory") => {
                    FreqValue::parse(value).map(|v| out.memory = Some(v))
                }
                Some(_) => None,
                None => FreqValue::parse(token).map(|v| out.graphics = Some(v)),
            };
            if parsed.is_none() {
                ignored.push(token.to_string());
            }
        }
        (out, ignored)
    }

    /// Fills the clocks the job left unset from `GpuFreqDef`.
    pub fn with_defaults(self, defaults: &GpuFreq) -> GpuFreq {
        GpuFreq {
            graphics: self.graphics.or(defaults.graphics),
            memory: self.memory.or(defaults.memory),
            verbose: self.verbose,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Slurm 22.05.8 src/plugins/gpu/common/gpu_common.c `gpu_common_get_nearest_freq` resolution rules,
    // supported list high→low with n = 5.
    const CLOCKS: [u32; 5] = [1500, 1300, 1100, 900, 700];

    #[test]
    fn named_values_pick_positions_of_the_sorted_list() {
        // low → last, medium → (n-1)/2 = 2, high → first, highm1 → second.
        assert_eq!(FreqValue::Low.resolve(&CLOCKS), Some(700));
        assert_eq!(FreqValue::Medium.resolve(&CLOCKS), Some(1100));
        assert_eq!(FreqValue::High.resolve(&CLOCKS), Some(1500));
        assert_eq!(FreqValue::HighM1.resolve(&CLOCKS), Some(1300));
        // highm1 with a single entry → that entry; medium with n = 4 → index 1.
        assert_eq!(FreqValue::HighM1.resolve(&[877]), Some(877));
        assert_eq!(FreqValue::Medium.resolve(&[4, 3, 2, 1]), Some(3));
        assert_eq!(FreqValue::High.resolve(&[]), None);
    }

    #[test]
    fn numbers_clamp_or_round_up() {
        // Slurm 22.05.8 src/plugins/gpu/common/gpu_common.c `gpu_common_get_nearest_freq`: above max →
        // max, below min → min, exact kept, between → next higher.
        assert_eq!(FreqValue::Mhz(2000).resolve(&CLOCKS), Some(1500));
        assert_eq!(FreqValue::Mhz(100).resolve(&CLOCKS), Some(700));
        assert_eq!(FreqValue::Mhz(1100).resolve(&CLOCKS), Some(1100));
        assert_eq!(FreqValue::Mhz(1000).resolve(&CLOCKS), Some(1100));
        assert_eq!(FreqValue::Mhz(1101).resolve(&CLOCKS), Some(1300));
    }

    #[test]
    fn parses_values_types_and_verbose() {
        // Slurm 22.05.8 src/plugins/gpu/common/gpu_common.c `_parse_gpu_freq2`:
        // `--gpu-freq=[<type>=]<value>[,<type>=<value>][,verbose]`.
        let (f, ignored) = GpuFreq::parse("medium,memory=HIGH,verbose");
        assert_eq!(
            f,
            GpuFreq {
                graphics: Some(FreqValue::Medium),
                memory: Some(FreqValue::High),
                verbose: true
            }
        );
        assert!(ignored.is_empty());
        let (f, ignored) = GpuFreq::parse("1200,bogus,clock=5");
        assert_eq!(f.graphics, Some(FreqValue::Mhz(1200)));
        assert_eq!(f.memory, None);
        assert_eq!(ignored, vec!["bogus".to_string(), "clock=5".to_string()]);
    }

    #[test]
    fn finds_the_gpu_part_of_tres_freq() {
        assert_eq!(
            gpu_part("gpu:medium,memory=high"),
            Some("medium,memory=high")
        );
        assert_eq!(gpu_part("cpu:low;gpu:high;other:1"), Some("high"));
        assert_eq!(gpu_part("cpu:low"), None);
        assert_eq!(gpu_part("gpu:"), None);
    }

    #[test]
    fn defaults_fill_only_unset_clocks() {
        // 22.05 GpuFreqDef default `high,memory=high` (Slurm 22.05.8 src/common/read_config.c), applied
        // by src/plugins/gpu/common/gpu_common.c `gpu_common_parse_gpu_freq`.
        let (def, _) = GpuFreq::parse("high,memory=high");
        let (user, _) = GpuFreq::parse("low");
        let f = user.with_defaults(&def);
        assert_eq!(f.graphics, Some(FreqValue::Low));
        assert_eq!(f.memory, Some(FreqValue::High));
    }
}
