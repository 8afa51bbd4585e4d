// input_example.cpp: an --input line that fits a forward's signature, for the error that says
// the given inputs do not (issue: users should not have to translate TorchScript types into the
// --input syntax themselves). Types map to the syntax of docs/config.md; tensor shapes are
// placeholders (2x3): the signature says nothing of them.
#include <sstream>

#include "shim_internal.hpp"

namespace {

// The --input text of one value of type `t`, or false when the syntax has none (a class, Any).
bool example_of(const c10::TypePtr &t, std::ostringstream &out) {
    switch (t->kind()) {
    case c10::TypeKind::TensorType:
        out << "2x3";
        return true;
    case c10::TypeKind::IntType:
        out << "int:1";
        return true;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::NumberType:
        out << "float:0.5";
        return true;
    case c10::TypeKind::BoolType:
        out << "bool:true";
        return true;
    case c10::TypeKind::StringType:
        out << "str:text";
        return true;
    case c10::TypeKind::NoneType:
        out << "none";
        return true;
    case c10::TypeKind::OptionalType:
        return example_of(t->expectRef<c10::OptionalType>().getElementType(), out);
    case c10::TypeKind::ListType: {
        const c10::TypePtr &e = t->expectRef<c10::ListType>().getElementType();
        out << '[';
        bool ok = example_of(e, out);
        out << ", ";
        ok = ok && example_of(e, out);
        out << ']';
        return ok;
    }
    case c10::TypeKind::TupleType: {
        out << '(';
        bool ok = true;
        const auto &elems = t->expectRef<c10::TupleType>().elements();
        for (size_t i = 0; i < elems.size() && ok; i++) {
            if (i) out << ", ";
            ok = example_of(elems[i], out);
        }
        out << ')';
        return ok;
    }
    case c10::TypeKind::DictType: {
        const auto &d = t->expectRef<c10::DictType>();
        out << '{';
        bool ok = true;
        switch (d.getKeyType()->kind()) {
        case c10::TypeKind::StringType:
            out << "key";
            break;
        case c10::TypeKind::IntType:
            out << "int:0";
            break;
        default:
            ok = false;
        }
        out << ": ";
        ok = ok && example_of(d.getValueType(), out);
        out << '}';
        return ok;
    }
    default:
        return false;
    }
}

} // namespace

namespace lps {

std::string example_inputs(const c10::FunctionSchema &schema) {
    std::ostringstream out;
    const auto &args = schema.arguments();
    for (size_t i = 1; i < args.size(); i++) { // after self
        std::ostringstream one;
        if (!example_of(args[i].type(), one)) return {};
        std::string text = one.str();
        bool plain = text.find_first_of(" [](){}") == std::string::npos;
        out << (i > 1 ? " " : "") << "--input " << (plain ? text : "'" + text + "'");
    }
    return out.str();
}

} // namespace lps
