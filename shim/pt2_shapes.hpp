// pt2_shapes.hpp: what a package's map says of shapes (python/layerprof_shapes.py writes it): the
// inputs' constraints, fixed dims or symbols with their ranges (dynamic_shapes at export), and the
// modules' FLOPs per forward and output shapes, figures that may be expressions in those symbols.
// The input check binds the symbols to a forward's input sizes; the figures are then evaluated
// once per distinct input shape, and delivered once per forward (aoti.cpp). No libtorch here.
#pragma once

#include <jansson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collect/event_sink.h"

namespace lps {

// An integer expression in the package's symbols: integers, names, + - * // % with parentheses,
// max(a, b), min(a, b) (python/layerprof_shapes.py's Printer writes nothing else). Floor division
// and modulo round as Python's do.
class SymExpr {
  public:
    // From a map value: an integer, or an expression's text. False on anything else, a syntax
    // error or a name not in `symbols`.
    bool read(json_t *value, const std::vector<std::string> &symbols);
    // Its value with the symbols' `values` (`bound[i]`: symbol i has one); false when a symbol
    // it uses is unbound or it divides by zero.
    bool eval(const std::vector<int64_t> &values, const std::vector<char> &bound,
              int64_t *out) const;
    // The plain symbol it is, or -1 (an integer or a compound expression).
    int symbol() const;
    const std::string &text() const {
        return text_;
    }

  private:
    enum class Op : uint8_t { push, symbol, add, sub, mul, floordiv, mod, max, min, neg };
    struct Step {
        Op op;
        int64_t value; // push: the integer; symbol: its index
    };
    std::vector<Step> rpn_;
    std::string text_;
    friend struct ExprParser;
};

struct Pt2Shapes {
    struct Symbol {
        std::string name;
        int64_t min = 0, max = -1; // max -1: no upper bound
    };
    struct Input {
        std::string dtype;         // "float32", "int64" (the example's)
        std::string example;       // the example's shape ("2x16")
        std::vector<SymExpr> dims; // fixed (integers) or symbolic
    };
    struct Module {
        bool has_flops = false;                       // written by the export (else: unknown)
        SymExpr flops;                                // its own ops' FLOPs per forward
        std::vector<std::vector<SymExpr>> out_shapes; // per call; empty: not known
    };
    bool recorded = false; // the map has the inputs' dims (version 2)
    std::vector<Symbol> symbols;
    std::vector<Input> inputs;
    std::vector<Module> modules;         // by module index
    std::vector<std::string> no_formula; // op names the export had no FLOPs formula for

    // The symbols' values at the inputs last checked, and the figures evaluated there.
    std::vector<int64_t> values;
    std::vector<char> bound;
    std::vector<std::vector<int64_t>> last_sizes; // the inputs last checked
    bool evaluated = false;                       // the figures below are for last_sizes
    std::vector<uint64_t> flops_now;              // per module (0 when not known)
    std::vector<std::vector<std::vector<int64_t>>> shapes_now; // per module, per call
};

// One input as the check sees it: its sizes and its dtype's name ("float32").
struct InputDesc {
    const int64_t *sizes;
    size_t rank;
    std::string dtype;
};

// Reads the map's "symbols", "input_dims" and each module's "flops" and "out_shapes" into `s`
// (`modules`: the map's module array, in index order). `examples` are the example inputs' specs
// ("2x16:int64"), their dtypes the ones the package takes. LP_OK, or a status and message
// naming `path` for a malformed entry.
int pt2_shapes_read(Pt2Shapes &s, json_t *root, json_t *modules,
                    const std::vector<std::string> &examples, const char *path);

// Whether the inputs fit the package: "" when they do (the symbols are then bound to their sizes
// and, when they changed, the figures evaluated again), else the message that says which input
// and dimension does not, and what the package allows.
std::string pt2_shapes_check(Pt2Shapes &s, const std::vector<InputDesc> &inputs);

// Delivers the figures at the inputs last checked, once per forward: each module's FLOPs
// (`flops`) and its calls' output shapes (`out_shape`), and the ops without a formula.
void pt2_shapes_deliver(const Pt2Shapes &s, const lp_event_sink &sink, bool flops, bool out_shape);

} // namespace lps
