// pt2_shapes.cpp: a package's input constraints and its shape-dependent figures (pt2_shapes.hpp).
#include "pt2_shapes.hpp"

#include <cctype>
#include <cstring>

#include "base/error.h"
#include "layerprof.h"

namespace lps {

// --- expressions -------------------------------------------------------------------------------

// Recursive descent over the text, appending to the expression's RPN.
struct ExprParser {
    const char *p;
    const std::vector<std::string> &symbols;
    std::vector<SymExpr::Step> &out;

    void skip() {
        while (*p == ' ')
            p++;
    }
    bool eat(const char *tok) {
        skip();
        size_t n = std::strlen(tok);
        if (std::strncmp(p, tok, n) != 0) return false;
        p += n;
        return true;
    }
    bool expr() {
        if (!term()) return false;
        for (;;) {
            SymExpr::Op op;
            if (eat("+"))
                op = SymExpr::Op::add;
            else if (eat("-"))
                op = SymExpr::Op::sub;
            else
                return true;
            if (!term()) return false;
            out.push_back({op, 0});
        }
    }
    bool term() {
        if (!unary()) return false;
        for (;;) {
            SymExpr::Op op;
            if (eat("//"))
                op = SymExpr::Op::floordiv;
            else if (eat("*"))
                op = SymExpr::Op::mul;
            else if (eat("%"))
                op = SymExpr::Op::mod;
            else
                return true;
            if (!unary()) return false;
            out.push_back({op, 0});
        }
    }
    bool unary() {
        if (eat("-")) {
            if (!unary()) return false;
            out.push_back({SymExpr::Op::neg, 0});
            return true;
        }
        return primary();
    }
    bool primary() {
        skip();
        if (eat("(")) return expr() && eat(")");
        if (std::isdigit(static_cast<unsigned char>(*p))) {
            int64_t v = 0;
            for (; std::isdigit(static_cast<unsigned char>(*p)); p++) {
                if (v > (INT64_MAX - 9) / 10) return false;
                v = v * 10 + (*p - '0');
            }
            out.push_back({SymExpr::Op::push, v});
            return true;
        }
        const char *start = p;
        while (std::isalnum(static_cast<unsigned char>(*p)) || *p == '_')
            p++;
        std::string name(start, p);
        if (name.empty()) return false;
        if ((name == "max" || name == "min") && eat("(")) {
            if (!expr() || !eat(",") || !expr() || !eat(")")) return false;
            out.push_back({name == "max" ? SymExpr::Op::max : SymExpr::Op::min, 0});
            return true;
        }
        for (size_t i = 0; i < symbols.size(); i++)
            if (symbols[i] == name) {
                out.push_back({SymExpr::Op::symbol, static_cast<int64_t>(i)});
                return true;
            }
        return false;
    }
};

bool SymExpr::read(json_t *value, const std::vector<std::string> &symbols) {
    rpn_.clear();
    if (json_is_integer(value)) {
        rpn_.push_back({Op::push, json_integer_value(value)});
        text_ = std::to_string(json_integer_value(value));
        return true;
    }
    const char *s = json_string_value(value);
    if (!s) return false;
    text_ = s;
    ExprParser parser{s, symbols, rpn_};
    if (!parser.expr()) return false;
    parser.skip();
    return *parser.p == '\0';
}

int SymExpr::symbol() const {
    return rpn_.size() == 1 && rpn_[0].op == Op::symbol ? static_cast<int>(rpn_[0].value) : -1;
}

bool SymExpr::eval(const std::vector<int64_t> &values, const std::vector<char> &bound,
                   int64_t *out) const {
    int64_t stack[64];
    size_t n = 0;
    for (const Step &s : rpn_) {
        if (s.op == Op::push || s.op == Op::symbol) {
            if (n == 64) return false;
            if (s.op == Op::symbol) {
                size_t i = static_cast<size_t>(s.value);
                if (i >= values.size() || !bound[i]) return false;
                stack[n++] = values[i];
            } else {
                stack[n++] = s.value;
            }
            continue;
        }
        if (s.op == Op::neg) {
            if (n < 1) return false;
            stack[n - 1] = -stack[n - 1];
            continue;
        }
        if (n < 2) return false;
        int64_t b = stack[--n], &a = stack[n - 1];
        switch (s.op) {
        case Op::add:
            a += b;
            break;
        case Op::sub:
            a -= b;
            break;
        case Op::mul:
            a *= b;
            break;
        case Op::floordiv:
        case Op::mod: { // Python's: the quotient rounds down, the remainder has b's sign
            if (b == 0) return false;
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                q--;
                r += b;
            }
            a = s.op == Op::floordiv ? q : r;
            break;
        }
        case Op::max:
            a = a > b ? a : b;
            break;
        case Op::min:
            a = a < b ? a : b;
            break;
        default:
            return false;
        }
    }
    if (n != 1) return false;
    *out = stack[0];
    return true;
}

// --- reading the map -----------------------------------------------------------------------------

namespace {

int malformed(const char *path, const char *what) {
    return lp_error_set(LP_ERR_MODEL,
                        "'%s': layerprof's module map has a malformed %s; export the package "
                        "again with python/layerprof_export.py",
                        path, what);
}

// The dtype of an example spec ("2x16:int64:0..999" -> "int64"; float32 when none is named).
std::string dtype_of_spec(const std::string &spec) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos) return "float32";
    size_t fill = spec.find(':', colon + 1);
    return spec.substr(colon + 1, fill == std::string::npos ? std::string::npos : fill - colon - 1);
}

std::string range_text(const Pt2Shapes::Symbol &s) {
    return std::to_string(s.min) + ".." + (s.max >= 0 ? std::to_string(s.max) : std::string());
}

std::string example_dims(const Pt2Shapes::Input &in) {
    return in.example;
}

} // namespace

int pt2_shapes_read(Pt2Shapes &s, json_t *root, json_t *modules,
                    const std::vector<std::string> &examples, const char *path) {
    std::vector<std::string> names;
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(root, "symbols"), key, v) {
        Pt2Shapes::Symbol sym;
        sym.name = key;
        sym.min = json_integer_value(json_object_get(v, "min"));
        json_t *max = json_object_get(v, "max");
        sym.max = json_is_integer(max) ? json_integer_value(max) : -1;
        names.push_back(sym.name);
        s.symbols.push_back(std::move(sym));
    }
    json_t *dims = json_object_get(root, "input_dims");
    if (!json_is_array(dims) || json_array_size(dims) != examples.size())
        return malformed(path, "input_dims");
    size_t i, j;
    json_array_foreach(dims, i, v) {
        Pt2Shapes::Input in;
        in.dtype = dtype_of_spec(examples[i]);
        in.example = examples[i].substr(0, examples[i].find(':'));
        json_t *d;
        json_array_foreach(v, j, d) {
            in.dims.emplace_back();
            if (!in.dims.back().read(d, names)) return malformed(path, "input dimension");
        }
        s.inputs.push_back(std::move(in));
    }
    json_array_foreach(modules, i, v) {
        Pt2Shapes::Module m;
        json_t *flops = json_object_get(v, "flops");
        m.has_flops = flops && !json_is_null(flops);
        if (m.has_flops && !m.flops.read(flops, names)) return malformed(path, "module's flops");
        json_t *call;
        json_array_foreach(json_object_get(v, "out_shapes"), j, call) {
            m.out_shapes.emplace_back();
            size_t k;
            json_t *d;
            json_array_foreach(call, k, d) {
                m.out_shapes.back().emplace_back();
                if (!m.out_shapes.back().back().read(d, names))
                    return malformed(path, "module's out_shapes");
            }
        }
        s.modules.push_back(std::move(m));
    }
    json_array_foreach(json_object_get(root, "no_formula"), i, v) if (json_string_value(v))
        s.no_formula.push_back(json_string_value(v));
    s.values.assign(s.symbols.size(), 0);
    s.bound.assign(s.symbols.size(), 0);
    s.recorded = true;
    return LP_OK;
}

// --- the check -----------------------------------------------------------------------------------

namespace {

// The figures at the symbols' values just bound.
void evaluate(Pt2Shapes &s) {
    size_t n = s.modules.size();
    s.flops_now.assign(n, 0);
    s.shapes_now.assign(n, {});
    for (size_t m = 0; m < n; m++) {
        const Pt2Shapes::Module &mod = s.modules[m];
        int64_t v = 0;
        if (mod.has_flops && mod.flops.eval(s.values, s.bound, &v) && v >= 0)
            s.flops_now[m] = static_cast<uint64_t>(v);
        for (const auto &call : mod.out_shapes) {
            std::vector<int64_t> dims;
            for (const SymExpr &d : call) {
                if (!d.eval(s.values, s.bound, &v)) {
                    dims.clear();
                    break;
                }
                dims.push_back(v);
            }
            if (dims.size() == call.size() && !call.empty()) s.shapes_now[m].push_back(dims);
        }
    }
}

} // namespace

std::string pt2_shapes_check(Pt2Shapes &s, const std::vector<InputDesc> &inputs) {
    if (inputs.size() != s.inputs.size()) {
        std::string expected;
        for (const auto &in : s.inputs)
            expected += (expected.empty() ? "" : ", ") + example_dims(in);
        return "the package takes " + std::to_string(s.inputs.size()) +
               (s.inputs.size() == 1 ? " input (" : " inputs (") + expected + " at export), not " +
               std::to_string(inputs.size());
    }
    bool same = s.last_sizes.size() == inputs.size();
    for (size_t i = 0; same && i < inputs.size(); i++)
        same =
            s.last_sizes[i].size() == inputs[i].rank &&
            std::equal(inputs[i].sizes, inputs[i].sizes + inputs[i].rank, s.last_sizes[i].begin());
    if (same && s.evaluated) return {};
    std::vector<char> bound(s.symbols.size(), 0);
    std::vector<int64_t> values(s.symbols.size(), 0);
    std::vector<std::pair<size_t, size_t>> bound_at(s.symbols.size());
    // Plain symbols first: they take their sizes from the inputs; fixed and compound dims are
    // checked against them afterwards.
    for (size_t i = 0; i < inputs.size(); i++) {
        const Pt2Shapes::Input &want = s.inputs[i];
        const InputDesc &got = inputs[i];
        std::string at = "input " + std::to_string(i);
        if (got.dtype != want.dtype)
            return at + " is " + got.dtype + ", the package was compiled for " + want.dtype +
                   " (AOTInductor fixes dtypes at export)";
        if (got.rank != want.dims.size())
            return at + " has " + std::to_string(got.rank) + " dimensions, the package was " +
                   "compiled for " + std::to_string(want.dims.size()) + " (" + example_dims(want) +
                   " at export)";
        for (size_t d = 0; d < got.rank; d++) {
            int sym = want.dims[d].symbol();
            if (sym < 0) continue;
            const Pt2Shapes::Symbol &range = s.symbols[static_cast<size_t>(sym)];
            int64_t size = got.sizes[d];
            std::string dim =
                at + " dimension " + std::to_string(d) + " is " + std::to_string(size);
            if (bound[sym] && values[sym] != size) {
                auto [i0, d0] = bound_at[sym];
                return dim + ", but input " + std::to_string(i0) + " dimension " +
                       std::to_string(d0) + " is " + std::to_string(values[sym]) +
                       ": the package has one size for both (" + range.name +
                       ", dynamic at export)";
            }
            if (size < range.min || (range.max >= 0 && size > range.max))
                return dim + ", outside the package's range " + range_text(range) + " (" +
                       range.name + ", dynamic at export)";
            bound[sym] = 1;
            values[sym] = size;
            bound_at[sym] = {i, d};
        }
    }
    for (size_t i = 0; i < inputs.size(); i++)
        for (size_t d = 0; d < inputs[i].rank; d++) {
            const SymExpr &e = s.inputs[i].dims[d];
            if (e.symbol() >= 0) continue;
            int64_t want = 0, size = inputs[i].sizes[d];
            bool fixed = e.text().find_first_not_of("0123456789") == std::string::npos;
            std::string dim = "input " + std::to_string(i) + " dimension " + std::to_string(d) +
                              " is " + std::to_string(size);
            if (!e.eval(values, bound, &want))
                return dim + ": the package's " + e.text() +
                       " cannot be worked out from the other inputs";
            if (want != size)
                return fixed ? dim + ", the package was compiled for " + std::to_string(want) +
                                   " (fixed at export)"
                             : dim + ", the package needs " + e.text() + " = " +
                                   std::to_string(want) + " (dynamic at export)";
        }
    s.values = values;
    s.bound = bound;
    s.last_sizes.clear();
    for (const InputDesc &in : inputs)
        s.last_sizes.emplace_back(in.sizes, in.sizes + in.rank);
    evaluate(s);
    s.evaluated = true;
    return {};
}

void pt2_shapes_deliver(const Pt2Shapes &s, const lp_event_sink &sink, bool flops, bool out_shape) {
    if (flops && sink.add_flops)
        for (size_t m = 0; m < s.flops_now.size(); m++)
            if (s.flops_now[m]) sink.add_flops(sink.ctx, static_cast<int32_t>(m), s.flops_now[m]);
    if (flops && sink.flops_unknown)
        for (const std::string &name : s.no_formula)
            sink.flops_unknown(sink.ctx, name.c_str());
    if (out_shape && sink.add_out_shape)
        for (size_t m = 0; m < s.shapes_now.size(); m++)
            for (const auto &dims : s.shapes_now[m])
                sink.add_out_shape(sink.ctx, static_cast<int32_t>(m), dims.data(),
                                   static_cast<int>(dims.size()));
}

} // namespace lps
