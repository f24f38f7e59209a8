// The lesson bundle the stepper reads (mpviz/bundle.py, `LessonBundle.to_json()`): its one documented schema, as
// JSDoc typedefs the modules name in their own JSDoc (`import("./schema.js").Bundle`). Types only: no code.
// tests/test_stepper.py turns these typedefs into a JSON Schema (every property listed is allowed, every one without
// [brackets] is required, nothing else is allowed) and validates real bundles against it, so Python and this file
// cannot drift apart; the node tests (test/schema.test.js) check that the stepper reads no bundle field this file
// does not declare. Every dtype is torch's name without "torch.", every index an event index.

/**
 * @typedef {number | "inf" | "-inf" | "nan"} Num a float; non-finite ones as strings (JSON has no inf/NaN)
 */

/**
 * @typedef {object} Bundle one traced run, forward and backward, under autocast: of the attention block
 *   (mpviz/bundle.py) or of any model (mpviz/model_bundle.py, for mpviz.show)
 * @property {number} schema the bundle's version (mpviz.bundle.SCHEMA)
 * @property {Run} run what was run, where
 * @property {Counts} counts how many events of each kind
 * @property {Object<string, Format>} formats dtype → bit layout and range, for every dtype shown
 * @property {string[]} range_formats the formats every output is measured against (overflow / underflow shares)
 * @property {Event[]} events every ATen op in execution order
 * @property {Object<string, number>} landmarks landmark name → its event
 * @property {Object<string, number>} landmark_outputs landmark name → which of that event's outputs it is
 * @property {Step[]} story the landmark steps in execution order
 * @property {Graph} graph the landmark dataflow graph (no nodes for any model's bundle: the stepper draws its
 *   module tree instead, treepanel.js)
 * @property {Object<string, Error>} errors landmark name → its error against a float64 run
 * @property {number} error_floor a reference below this share of its pass's largest counts as zero
 * @property {FirstNonfinite | null} first_nonfinite the first op that made inf/NaN, or null
 */

/**
 * @typedef {object} Run
 * @property {Object<string, *>} config the AttentionConfig (mpviz.model) as a dict; for any model (mpviz.show) its
 *   class name, parameter count and inputs ({model, parameters, inputs})
 * @property {"cpu" | "cuda" | "cuda-sim"} device whose autocast policy ran
 * @property {string} computed_on the device that did the arithmetic
 * @property {string | null} autocast_dtype null: autocast off
 * @property {string} torch_version
 * @property {string[]} emulation_limits codes of mpviz.emulation.EMULATION_LIMITS (cuda-sim only)
 * @property {string | null} counterpart_device the device compared with, or null
 * @property {string} [reference_failed] a model's bundle (mpviz/model_bundle.py) whose float64 copy could not run:
 *   the exception's type name (there are no errors then)
 */

/**
 * @typedef {object} Counts
 * @property {number} events
 * @property {number} forward
 * @property {number} backward
 * @property {number} casts events autocast inserted (or their gradients)
 */

/**
 * @typedef {object} Format a floating-point format (mpviz.formats.FormatSpec + mpviz.stats.FormatRange)
 * @property {string} name
 * @property {string} short e.g. "bf16"
 * @property {number} bits
 * @property {number} sign_bits
 * @property {number} exponent_bits
 * @property {number} mantissa_bits
 * @property {number} bias
 * @property {Num} max
 * @property {Num} smallest_normal
 * @property {Num} smallest_subnormal
 * @property {Num} eps
 * @property {boolean} has_inf
 * @property {boolean} has_nan
 * @property {boolean} has_zero
 * @property {boolean} has_negative_zero
 * @property {boolean} has_subnormals
 * @property {"ieee" | "top_nan" | "negzero_nan" | "none"} special_codes where inf/NaN live in the bit patterns
 * @property {Num} overflow_at where rounding to the format overflows
 * @property {boolean} overflow_inclusive whether the tie itself overflows
 * @property {Num} underflow_at where rounding flushes to zero
 * @property {boolean} underflow_inclusive
 * @property {"inf" | "nan" | "saturate"} overflow what a value past max becomes, exactly rounded
 * @property {"inf" | "nan" | "saturate" | null} torch_overflow what torch's cast makes of it (null: torch has no such dtype)
 */

/**
 * @typedef {object} Event one ATen op
 * @property {number} i its index
 * @property {string} key stable across devices and dtypes: the landmark, else "phase|module|op|k"
 * @property {"forward" | "backward"} phase
 * @property {string} module the module path ("" for the model)
 * @property {string} op e.g. "aten.mm.default"
 * @property {Tensor[]} in
 * @property {(number | string | null)[]} src per input: the producer event, "param:<name>" or null
 * @property {Output[]} out
 * @property {boolean} cast autocast inserted it (or it is the gradient of such a cast)
 * @property {string | null} cast_for the autocast op a forward cast fed
 * @property {string | null} node the autograd node of a backward op
 * @property {number | null} fwd the forward event of a backward op
 * @property {string[]} landmarks
 * @property {boolean} creates_nonfinite finite inputs, inf/NaN output
 * @property {string} [other_dtype] the first output's dtype under the counterpart's policy, where it differs
 */

/**
 * @typedef {object} Tensor
 * @property {string} dtype
 * @property {number[]} shape
 */

/**
 * @typedef {object} Output
 * @property {string} dtype
 * @property {number[]} shape
 * @property {Stats} [stats] floating outputs only
 * @property {Sample} [sample] a corner of the values
 */

/**
 * @typedef {object} Stats
 * @property {number} numel
 * @property {Num | null} min
 * @property {Num | null} max
 * @property {Num | null} abs_max
 * @property {Num | null} mean
 * @property {Num | null} std
 * @property {number} nan
 * @property {number} posinf
 * @property {number} neginf
 * @property {number} zero
 * @property {number} subnormal
 * @property {Object<string, number>} overflow range format → share of elements that would overflow
 * @property {Object<string, number>} underflow range format → share that would flush to zero
 * @property {number[][]} log2_hist [[exponent, count]]
 * @property {number} [sampled] mean, std, zero, subnormal, underflow and log2_hist estimated from this many evenly
 *   spaced elements (counts scaled to numel); min, max, the non-finite and overflow figures read every element
 */

/**
 * @typedef {object} Sample
 * @property {number[]} shape [m, r, c] of the corner kept
 * @property {number[]} of the full shape
 * @property {string} values base64 of little-endian float32, row-major
 */

/**
 * @typedef {object} Step a landmark step of the story
 * @property {number} event
 * @property {string[]} landmarks
 * @property {number[]} casts the cast events that fed it, back to the previous landmarks
 * @property {string[]} inputs the landmarks it was computed from
 * @property {Notice[]} notices facts the card turns into sentences (kinds: mpviz.notices)
 */

/**
 * @typedef {Object<string, *>} Notice a fact: its kind, and fields that depend on the kind (mpviz.notices)
 * @property {string} kind
 */

/**
 * @typedef {object} Graph
 * @property {GraphNode[]} nodes
 * @property {GraphEdge[]} edges
 */

/**
 * @typedef {object} GraphNode
 * @property {string} id the landmark
 * @property {number} event
 * @property {"forward" | "backward"} phase
 * @property {string} dtype
 * @property {number[]} shape
 * @property {string} [other_dtype] under the counterpart's policy, where it differs
 */

/**
 * @typedef {object} GraphEdge
 * @property {string} from
 * @property {string} to
 * @property {number[]} casts
 */

/**
 * @typedef {object} Error normwise error against float64
 * @property {Num | null} rel ‖a − ref‖ / ‖ref‖; null where the reference counts as zero
 * @property {Num} abs_rms
 * @property {Num} ref_rms
 * @property {Num} max_abs
 * @property {boolean} nonfinite
 */

/**
 * @typedef {object} FirstNonfinite
 * @property {number} event
 * @property {number | null} [counterpart_event] the counterpart's first, null when it stays finite; absent: none
 */

export {};
