//! The compiled XLA programs embedded in a profile: the `Hlo Proto` stats
//! of the `/host:metadata` plane, decoded into [`crate::trace::xla`] structs.

use prost::Message;

use super::proto::{HloInstructionProto, HloProto, RawPlane, ShapeProto, XStatValue};
use crate::trace::xla::{HloComputation, HloInstruction, HloModule, HloShape};

/// Name of the plane holding the HLO modules.
pub const METADATA_PLANE: &str = "/host:metadata";

/// Name of the stat whose bytes are a serialized `xla.HloProto`.
const HLO_PROTO_STAT: &str = "Hlo Proto";

/// The modules of the `/host:metadata` planes, by program id (the event
/// metadata id), as xprof reads them: an entry whose bytes do not decode,
/// or that has no module, is left out (with a warning); of two entries
/// with one program id the first is kept.
pub fn modules(planes: &[RawPlane], warnings: &mut Vec<String>) -> Vec<HloModule> {
    let mut out: Vec<HloModule> = Vec::new();
    for plane in planes.iter().filter(|p| p.name == METADATA_PLANE) {
        let Some(stat_id) = plane
            .stat_metadata
            .values()
            .find(|m| m.name == HLO_PROTO_STAT)
            .map(|m| m.id)
        else {
            continue;
        };
        for meta in plane.event_metadata.values() {
            let Some(stat) = meta.stats.iter().find(|s| s.metadata_id == stat_id) else {
                continue;
            };
            let Some(XStatValue::Bytes(bytes)) = &stat.value else {
                continue;
            };
            match HloProto::decode(bytes.clone()) {
                Ok(HloProto {
                    hlo_module: Some(m),
                }) => {
                    if out.iter().any(|x| x.program_id == meta.id) {
                        continue;
                    }
                    out.push(HloModule {
                        name: m.name,
                        program_id: meta.id,
                        entry_computation: m.entry_computation_name,
                        computations: m
                            .computations
                            .into_iter()
                            .map(|c| HloComputation {
                                name: c.name,
                                root_id: c.root_id,
                                instructions: c.instructions.into_iter().map(instruction).collect(),
                            })
                            .collect(),
                    });
                }
                Ok(_) => warnings.push(format!(
                    "XLA program {} ({}) has no HLO module; its kernels get no HLO details",
                    meta.id, meta.name
                )),
                Err(e) => warnings.push(format!(
                    "XLA program {} ({}): the HLO module does not decode ({e}); its kernels get no HLO details",
                    meta.id, meta.name
                )),
            }
        }
    }
    out.sort_by_key(|m| m.program_id);
    out
}

fn instruction(i: HloInstructionProto) -> HloInstruction {
    let some = |s: String| (!s.is_empty()).then_some(s);
    let meta = i.metadata.unwrap_or_default();
    HloInstruction {
        id: i.id,
        name: i.name,
        opcode: i.opcode,
        shape: i.shape.map(shape).unwrap_or_default(),
        operand_ids: i.operand_ids,
        custom_call_target: some(i.custom_call_target),
        backend_config: (!i.backend_config.is_empty())
            .then(|| String::from_utf8_lossy(&i.backend_config).into_owned()),
        op_type: some(meta.op_type),
        op_name: some(meta.op_name),
        source_line: (meta.source_line != 0 || !meta.source_file.is_empty())
            .then_some(i64::from(meta.source_line)),
        source_file: some(meta.source_file),
    }
}

fn shape(s: ShapeProto) -> HloShape {
    HloShape {
        element_type: s.element_type,
        dims: s.dimensions,
        minor_to_major: s.layout.map(|l| l.minor_to_major),
        tuple: s.tuple_shapes.into_iter().map(shape).collect(),
    }
}
