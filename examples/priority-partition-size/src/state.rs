//! The saved form of the plugin's [`Config`], for `state-save` and
//! `state-restore`.
//!
//! Layout, little-endian: the magic `PPSZ`, format version `1` (u16), the
//! partition and job-size weights, cluster CPUs and nodes (u32 each), the
//! partition count (u32), then per partition its `PriorityJobFactor` (u16)
//! and its name (u32 length, UTF-8 bytes).

use crate::config::{Config, Partition, Weights};

const MAGIC: &[u8; 4] = b"PPSZ";
const VERSION: u16 = 1;

/// Serialises `config`.
pub fn encode(config: &Config) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    for value in [
        config.weights.partition,
        config.weights.job_size,
        config.cluster_cpus,
        config.cluster_nodes,
        config.partitions.len() as u32,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for partition in &config.partitions {
        out.extend_from_slice(&partition.job_factor.to_le_bytes());
        out.extend_from_slice(&(partition.name.len() as u32).to_le_bytes());
        out.extend_from_slice(partition.name.as_bytes());
    }
    out
}

/// The inverse of [`encode`]. Refuses, with a message saying why, anything
/// it cannot read completely: a foreign magic, another format version,
/// truncation, a name that is not UTF-8, or trailing bytes.
pub fn decode(data: &[u8]) -> Result<Config, String> {
    let mut r = Reader { data, pos: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a priority/partition_size state (bad magic)".into());
    }
    let version = u16::from_le_bytes(r.array()?);
    if version != VERSION {
        return Err(format!(
            "unknown priority/partition_size state version {version}"
        ));
    }
    let weights = Weights {
        partition: r.u32()?,
        job_size: r.u32()?,
    };
    let (cluster_cpus, cluster_nodes) = (r.u32()?, r.u32()?);
    let count = r.u32()?;
    let mut partitions = Vec::new();
    for _ in 0..count {
        let job_factor = u16::from_le_bytes(r.array()?);
        let len = r.u32()? as usize;
        let name = String::from_utf8(r.take(len)?.to_vec())
            .map_err(|_| "partition name is not UTF-8".to_string())?;
        partitions.push(Partition { name, job_factor });
    }
    if r.pos != data.len() {
        return Err(format!(
            "{} trailing bytes after the state",
            data.len() - r.pos
        ));
    }
    Ok(Config {
        weights,
        partitions,
        cluster_cpus,
        cluster_nodes,
    })
}

/// A cursor over the blob that fails instead of reading past its end.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let bytes = self
            .data
            .get(self.pos..)
            .and_then(|rest| rest.get(..n))
            .ok_or_else(|| format!("state truncated at byte {}", self.pos))?;
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            weights: Weights {
                partition: 5000,
                job_size: 300,
            },
            partitions: vec![
                Partition {
                    name: "debug".into(),
                    job_factor: 1,
                },
                Partition {
                    name: "batch".into(),
                    job_factor: 20,
                },
            ],
            cluster_cpus: 1000,
            cluster_nodes: 100,
        }
    }

    #[test]
    fn round_trips() {
        let bytes = encode(&config());
        assert_eq!(bytes.len(), 4 + 2 + 5 * 4 + (2 + 4 + 5) * 2);
        assert_eq!(decode(&bytes).unwrap(), config());
        assert_eq!(
            decode(&encode(&Config::default())).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn refuses_malformed_blobs() {
        let bytes = encode(&config());
        assert_eq!(
            decode(&bytes[..bytes.len() - 1]).unwrap_err(),
            "state truncated at byte 43"
        );
        assert_eq!(decode(b"PP").unwrap_err(), "state truncated at byte 0");
        let mut extra = bytes.clone();
        extra.push(0);
        assert_eq!(
            decode(&extra).unwrap_err(),
            "1 trailing bytes after the state"
        );
        let mut foreign = bytes.clone();
        foreign[..4].copy_from_slice(b"PBAS");
        assert!(decode(&foreign).unwrap_err().contains("bad magic"));
        let mut future = bytes.clone();
        future[4] = 2;
        assert!(decode(&future).unwrap_err().contains("version 2"));
        let mut not_utf8 = bytes;
        not_utf8[36] = 0xff;
        assert_eq!(
            decode(&not_utf8).unwrap_err(),
            "partition name is not UTF-8"
        );
        // A huge partition count cannot make decode allocate or read past the end.
        let mut lying = encode(&Config::default());
        lying[22..26].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&lying).unwrap_err().contains("truncated"));
    }
}
