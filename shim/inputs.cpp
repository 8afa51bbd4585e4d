// inputs.cpp: the forward's arguments, made from the entries of lp_options.inputs: tensors
// (random, constant or read from raw data), scalars, none, lists, tuples and dicts nested as the
// entries say (lp_input_kind), and the arguments a torch.save file holds.
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "shim_internal.hpp"

namespace {

using lps::scalar_type;

bool is_integer(lp_dtype d) {
    return d == LP_DTYPE_INT64 || d == LP_DTYPE_INT32 || d == LP_DTYPE_INT16 ||
           d == LP_DTYPE_INT8 || d == LP_DTYPE_UINT8 || d == LP_DTYPE_BOOL;
}

int make_tensor(const lp_input_spec &s, at::Generator &gen, const c10::Device &dev,
                at::Tensor *out) {
    std::vector<int64_t> shape(s.shape, s.shape + s.ndim);
    auto type = scalar_type(s.dtype);
    at::Tensor t;
    switch (s.fill) {
    case LP_FILL_ZEROS:
        t = at::zeros(shape, at::TensorOptions().dtype(type));
        break;
    case LP_FILL_ONES:
        t = at::ones(shape, at::TensorOptions().dtype(type));
        break;
    case LP_FILL_FILE: {
        std::ifstream f(s.file, std::ios::binary | std::ios::ate);
        if (!f)
            return lp_error_set(LP_ERR_IO, "cannot open input file '%s': %s", s.file,
                                strerror(errno));
        int64_t have = (int64_t)f.tellg();
        t = at::empty(shape, at::TensorOptions().dtype(type));
        int64_t need = (int64_t)t.nbytes();
        if (have != need)
            return lp_error_set(LP_ERR_INVALID,
                                "input file '%s' has %lld bytes; shape %s of %s needs %lld", s.file,
                                (long long)have, c10::str(t.sizes()).c_str(),
                                lp_dtype_name(s.dtype), (long long)need);
        f.seekg(0);
        if (!f.read(static_cast<char *>(t.data_ptr()), need))
            return lp_error_set(LP_ERR_IO, "cannot read input file '%s'", s.file);
        break;
    }
    case LP_FILL_RANDOM:
    default:
        if (is_integer(s.dtype)) {
            double lo = s.has_range ? s.low : 0, hi = s.has_range ? s.high : 2;
            t = at::randint((int64_t)lo, (int64_t)hi, shape, gen,
                            at::TensorOptions().dtype(c10::kLong))
                    .to(type);
        } else {
            t = at::rand(shape, gen, at::TensorOptions().dtype(c10::kFloat));
            if (s.has_range) t = t * (s.high - s.low) + s.low;
            t = t.to(type);
        }
    }
    *out = t.to(dev);
    return LP_OK;
}

c10::TypePtr plain_type(const c10::IValue &v) {
    if (v.isTensor()) return c10::TensorType::get();
    return v.type();
}

// The type to give a container built from items of these types: the one the forward declares
// when every item fits it (an empty list or a List[Tensor] argument), else what the items have in
// common, else Any (the schema check then says what is wrong, with the forward's signature).
c10::TypePtr common_type(const std::vector<c10::IValue> &items, const c10::TypePtr &declared) {
    bool fits = declared != nullptr;
    for (const auto &v : items)
        fits = fits && plain_type(v)->isSubtypeOf(*declared);
    if (fits) return declared;
    if (items.empty()) return c10::AnyType::get();
    c10::TypePtr unified = plain_type(items[0]);
    for (size_t i = 1; i < items.size() && unified; i++) {
        auto u = c10::unifyTypes(unified, plain_type(items[i]));
        unified = u ? *u : nullptr;
    }
    return unified ? unified : c10::AnyType::get();
}

c10::TypePtr without_optional(const c10::TypePtr &t) {
    if (t)
        if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
    return t;
}

// What the forward declares for a container's items; nullptr where it declares nothing that fits.
c10::TypePtr declared_element(const c10::TypePtr &declared) {
    if (declared)
        if (auto l = declared->cast<c10::ListType>()) return l->getElementType();
    return nullptr;
}

std::vector<c10::TypePtr> declared_tuple(const c10::TypePtr &declared, size_t n) {
    if (declared)
        if (auto t = declared->cast<c10::TupleType>())
            if (t->elements().size() == n) return {t->elements().begin(), t->elements().end()};
    return std::vector<c10::TypePtr>(n);
}

std::pair<c10::TypePtr, c10::TypePtr> declared_dict(const c10::TypePtr &declared) {
    if (declared)
        if (auto d = declared->cast<c10::DictType>()) return {d->getKeyType(), d->getValueType()};
    return {nullptr, nullptr};
}

c10::IValue typed_list(std::vector<c10::IValue> items, const c10::TypePtr &element) {
    c10::impl::GenericList list(common_type(items, element));
    for (auto &item : items)
        list.push_back(std::move(item));
    return list;
}

c10::IValue typed_dict(std::vector<c10::IValue> keys, std::vector<c10::IValue> values,
                       const c10::TypePtr &key, const c10::TypePtr &value) {
    c10::impl::GenericDict dict(key, common_type(values, value));
    for (size_t i = 0; i < keys.size(); i++)
        dict.insert_or_assign(std::move(keys[i]), std::move(values[i]));
    return dict;
}

// A value torch.save wrote, on the device, its containers typed as the forward declares them:
// an unpickled list is a List[Any], which a List[Tensor] argument refuses.
c10::IValue adopt(const c10::IValue &v, const c10::TypePtr &declared_or_optional,
                  const c10::Device &dev) {
    c10::TypePtr declared = without_optional(declared_or_optional);
    if (v.isTensor()) return v.toTensor().to(dev);
    if (v.isTuple()) {
        const auto &elements = v.toTupleRef().elements();
        std::vector<c10::TypePtr> types = declared_tuple(declared, elements.size());
        std::vector<c10::IValue> items;
        for (size_t i = 0; i < elements.size(); i++)
            items.push_back(adopt(elements[i], types[i], dev));
        return c10::ivalue::Tuple::create(std::move(items));
    }
    if (v.isList()) {
        c10::TypePtr element = declared_element(declared);
        std::vector<c10::IValue> items;
        for (const auto &e : v.toListRef())
            items.push_back(adopt(e, element, dev));
        return typed_list(std::move(items), element);
    }
    if (v.isGenericDict()) {
        auto kv_types = declared_dict(declared);
        std::vector<c10::IValue> keys, values;
        for (const auto &kv : v.toGenericDict()) {
            keys.push_back(kv.key());
            values.push_back(adopt(kv.value(), kv_types.second, dev));
        }
        c10::TypePtr key = common_type(keys, kv_types.first);
        return typed_dict(std::move(keys), std::move(values), key, kv_types.second);
    }
    return v;
}

// Walks the entries in order, building one value at a time.
struct Builder {
    const lp_input_spec *specs;
    size_t n, pos;
    at::Generator &gen;
    const c10::Device &dev;
    std::vector<at::Tensor> &tensors; // by entry index; undefined where the entry is no tensor

    int value(const c10::TypePtr &declared, c10::IValue *out) {
        if (pos >= n) return lp_error_set(LP_ERR_INVALID, "input entries end inside a container");
        const lp_input_spec &s = specs[pos++];
        switch (s.kind) {
        case LP_INPUT_TENSOR: {
            at::Tensor t;
            int rc = make_tensor(s, gen, dev, &t);
            if (rc) return rc;
            tensors[pos - 1] = t;
            *out = t;
            return LP_OK;
        }
        case LP_INPUT_INT:
            *out = c10::IValue(static_cast<int64_t>(s.integer));
            return LP_OK;
        case LP_INPUT_FLOAT:
            *out = c10::IValue(s.real);
            return LP_OK;
        case LP_INPUT_BOOL:
            *out = c10::IValue(s.integer != 0);
            return LP_OK;
        case LP_INPUT_STR:
            *out = c10::IValue(std::string(s.file));
            return LP_OK;
        case LP_INPUT_NONE:
            *out = c10::IValue();
            return LP_OK;
        case LP_INPUT_LIST:
        case LP_INPUT_TUPLE:
            return sequence(s, without_optional(declared), out);
        case LP_INPUT_DICT:
            return dict(s, without_optional(declared), out);
        default:
            return lp_error_set(LP_ERR_INVALID,
                                "input entry %zu: saved:FILE is a whole argument list, not an item",
                                pos);
        }
    }

    int sequence(const lp_input_spec &s, const c10::TypePtr &declared, c10::IValue *out) {
        bool tuple = s.kind == LP_INPUT_TUPLE;
        c10::TypePtr element = tuple ? nullptr : declared_element(declared);
        std::vector<c10::TypePtr> types = tuple ? declared_tuple(declared, s.n_items)
                                                : std::vector<c10::TypePtr>(s.n_items, element);
        std::vector<c10::IValue> items(s.n_items);
        for (size_t i = 0; i < s.n_items; i++) {
            int rc = value(types[i], &items[i]);
            if (rc) return rc;
        }
        *out = tuple ? c10::IValue(c10::ivalue::Tuple::create(std::move(items)))
                     : typed_list(std::move(items), element);
        return LP_OK;
    }

    int dict(const lp_input_spec &s, const c10::TypePtr &declared, c10::IValue *out) {
        auto kv_types = declared_dict(declared);
        std::vector<c10::IValue> keys(s.n_items), values(s.n_items);
        for (size_t i = 0; i < s.n_items; i++) {
            int rc = value(kv_types.first, &keys[i]);
            if (!rc) rc = value(kv_types.second, &values[i]);
            if (rc) return rc;
        }
        c10::TypePtr key = common_type(keys, kv_types.first);
        if (key->kind() != c10::TypeKind::StringType && key->kind() != c10::TypeKind::IntType)
            key = c10::StringType::get(); // no items: the forward declared no dict here either
        for (const auto &k : keys)
            if (!plain_type(k)->isSubtypeOf(*key))
                return lp_error_set(LP_ERR_INVALID,
                                    "a dict's keys must all be words (str) or all int:N");
        *out = typed_dict(std::move(keys), std::move(values), key, kv_types.second);
        return LP_OK;
    }
};

// saved:FILE: what torch.save((arg1, arg2), FILE) wrote; a tuple is the argument list, typed by
// `declared` (the forward's argument types, self first).
int load_saved(const char *file, const c10::Device &dev, const std::vector<c10::TypePtr> &declared,
               std::vector<c10::IValue> &args) {
    std::ifstream f(file, std::ios::binary);
    if (!f)
        return lp_error_set(LP_ERR_IO, "cannot open saved inputs '%s': %s", file, strerror(errno));
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    c10::IValue v;
    try {
        v = torch::jit::pickle_load(bytes);
    } catch (const std::exception &e) {
        std::string said(lps::condense(e.what()));
        // Python pickles a list or dict of one item with APPEND ('a') or SETITEM ('s'), which
        // libtorch 1.13's unpickler lacks (2.x reads them).
        if (said.find("Unknown opcode") != std::string::npos &&
            (said.find("0x61") != std::string::npos || said.find("0x73") != std::string::npos))
            return lp_error_set(LP_ERR_UNSUPPORTED,
                                "'%s' holds a list or dict of exactly one item, which libtorch "
                                "%d.%d cannot read from a torch.save file (%s); give that "
                                "argument with --input instead",
                                file, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, said.c_str());
        return lp_error_set(LP_ERR_IO,
                            "'%s' is not a file torch.save wrote (save the forward's arguments "
                            "with torch.save((arg1, arg2), FILE)): %s",
                            file, said.c_str());
    }
    auto declared_at = [&](size_t arg) { // 0 is self
        return arg + 1 < declared.size() ? declared[arg + 1] : c10::TypePtr();
    };
    if (v.isTuple())
        for (const auto &e : v.toTupleRef().elements())
            args.push_back(adopt(e, declared_at(args.size()), dev));
    else
        args.push_back(adopt(v, declared_at(args.size()), dev));
    return LP_OK;
}

} // namespace

extern "C" {

int lps_inputs_create(lps_model *m, const lp_input_spec *specs, size_t n, uint64_t seed,
                      lps_inputs **out) noexcept {
    if (!m || (!specs && n) || !out)
        return lp_error_set(LP_ERR_INVALID, "lps_inputs_create: NULL argument");
    *out = nullptr;
    return lps::guard([&]() -> int {
        auto in = std::make_unique<lps_inputs>();
        at::Generator gen = at::detail::createCPUGenerator(seed);
        // The forward's declared argument types (self first), to type containers by.
        std::vector<c10::TypePtr> declared = m->backend->declared_inputs(m);
        in->tensors.resize(n);
        Builder b{specs, n, 0, gen, m->device, in->tensors};
        while (b.pos < n) {
            if (specs[b.pos].kind == LP_INPUT_SAVED) {
                int rc = load_saved(specs[b.pos++].file, m->device, declared, in->values);
                if (rc) return rc;
                continue;
            }
            size_t arg = in->values.size() + 1; // 0 is self
            c10::IValue v;
            int rc = b.value(arg < declared.size() ? declared[arg] : nullptr, &v);
            if (rc) return rc;
            in->values.push_back(std::move(v));
        }
        if (int rc = m->backend->check_inputs(m, in.get())) return rc;
        *out = in.release();
        return LP_OK;
    });
}

void lps_inputs_free(lps_inputs *in) noexcept {
    try {
        delete in;
    } catch (...) {
    }
}

int lps_inputs_set(lps_inputs *in, size_t index, const void *data, size_t bytes) noexcept {
    if (!in || (!data && bytes))
        return lp_error_set(LP_ERR_INVALID, "lps_inputs_set: NULL argument");
    return lps::guard([&]() -> int {
        if (index >= in->tensors.size())
            return lp_error_set(LP_ERR_INVALID, "input %zu does not exist (there are %zu entries)",
                                index, in->tensors.size());
        if (!in->tensors[index].defined())
            return lp_error_set(LP_ERR_INVALID, "input %zu is not a tensor", index);
        at::Tensor t = in->tensors[index];
        if ((size_t)t.nbytes() != bytes)
            return lp_error_set(LP_ERR_INVALID, "input %zu holds %zu bytes (%s), not the %zu given",
                                index, (size_t)t.nbytes(), c10::toString(t.scalar_type()), bytes);
        c10::InferenceMode guard; // the inputs are inference tensors: updated in that mode only
        if (t.is_cpu() && t.is_contiguous()) {
            if (bytes) memcpy(t.data_ptr(), data, bytes);
        } else {
            t.copy_(
                at::from_blob(const_cast<void *>(data), t.sizes(), t.options().device(at::kCPU)));
        }
        return LP_OK;
    });
}

} // extern "C"
