//! The Nano-consensus FPGA core in rust-hdl (see `rtl/README.md`).
#![allow(missing_docs)]

/// A rust-hdl block whose fields are written once (issue 17 item 5: no hand-written `Default`
/// listing every field again). Each field's initial value — a constant, a register's reset
/// value, a sub-block built with arguments — follows its type after `=`; every other field
/// starts as `Default::default()`. Expands to the `#[derive(LogicBlock)]` struct, fields in the
/// order written (so the Verilog is the same), and `fn build(ARGS) -> Self`, whose arguments are
/// what the initial values need. Const generic parameters (with defaults) go after the name:
///
/// ```ignore
/// block! {
///     /// Doc of the block.
///     pub struct Name(width: u64) {
///         pub clock: Signal<In, Clock>,
///         r: DFFWithInit<Bits<8>> = DFFWithInit::new(Bits::<8>::from(1u64)),
///         k_width: Constant<Bits<16>> = k(width),
///     }
/// }
/// ```
macro_rules! block {
    (
        $(#[$sm:meta])*
        $svis:vis struct $name:ident $(<$(const $gp:ident : $gt:ty $(= $gd:tt)?),*>)?
            ($($arg:ident : $aty:ty),* $(,)?) {
            $(
                $(#[$fm:meta])*
                $fvis:vis $field:ident : $fty:ty $(= $init:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[$sm])*
        #[derive(LogicBlock)]
        $svis struct $name $(<$(const $gp: $gt $(= $gd)?),*>)? {
            $( $(#[$fm])* $fvis $field: $fty, )*
        }
        impl<$($(const $gp: $gt),*)?> $name<$($($gp),*)?> {
            /// The block with its fields' initial values (`block!`).
            fn build($($arg: $aty),*) -> Self {
                Self { $( $field: block!(@init $($init)?), )* }
            }
        }
    };
    (@init) => { Default::default() };
    (@init $e:expr) => { $e };
}

pub mod csr;
pub mod egress_fifo;
pub mod export;
pub mod host_gen;
pub mod layout;
pub mod lowi_core;
pub mod nc_core;
pub mod nc_engine;
pub mod out_fifo;
pub mod pkt_gen;
pub mod pkt_parser;
pub mod pkt_stream;
pub mod prim;
pub mod reply_gen;
pub mod req_capture;
pub mod rsbcast_rx;
pub mod sim;
