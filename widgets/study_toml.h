#pragma once

// TOML values as the study document (widgets/study_document.cpp) writes and reads them: toml++
// nodes as text (quoted strings, bare or quoted keys, the shortest float that reads back, arrays
// on one line) and as QVariants, QVariants put back as nodes, and table header lines. Internal to
// study_document.cpp, and inline: the study document fuzzer (tests/fuzz) compiles that one file.

#include <QChar>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <toml++/toml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

namespace lmk::widgets::study_toml {

inline QString quote_string(const std::string& utf8) {
  QString out = QStringLiteral("\"");
  for (const QChar c : QString::fromStdString(utf8)) {
    switch (c.unicode()) {
      case '"':
        out += QStringLiteral("\\\"");
        break;
      case '\\':
        out += QStringLiteral("\\\\");
        break;
      case '\n':
        out += QStringLiteral("\\n");
        break;
      case '\t':
        out += QStringLiteral("\\t");
        break;
      case '\r':
        out += QStringLiteral("\\r");
        break;
      default:
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
          out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QChar('0'));
        else
          out += c;
    }
  }
  return out + QStringLiteral("\"");
}

inline QString key_text(const QString& key) {
  static const QRegularExpression bare(QStringLiteral("^[A-Za-z0-9_-]+$"));
  return bare.match(key).hasMatch() ? key : quote_string(key.toStdString());
}

// The shortest text that reads back as the same double, always a TOML float ("1.0", not "1").
inline QString float_text(double v) {
  if (std::isnan(v)) return QStringLiteral("nan");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  QString text = QString::fromLatin1(buffer, static_cast<int>(result.ptr - buffer));
  if (!text.contains(QChar('.')) && !text.contains(QChar('e'))) text += QStringLiteral(".0");
  static const QRegularExpression padded_exponent(QStringLiteral("e([+-]?)0+(\\d)"));
  return text.replace(padded_exponent, QStringLiteral("e\\1\\2"));
}

inline QString node_text(const toml::node& node);

inline QString inline_table_text(const toml::table& table) {
  QStringList parts;
  for (auto&& [key, value] : table)
    parts << key_text(QString::fromStdString(std::string(key.str()))) + QStringLiteral(" = ") +
                 node_text(value);
  return parts.isEmpty()
             ? QStringLiteral("{}")
             : QStringLiteral("{ ") + parts.join(QStringLiteral(", ")) + QStringLiteral(" }");
}

inline QString node_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return quote_string(s->get());
  if (const auto* i = node.as_integer()) return QString::number(i->get());
  if (const auto* f = node.as_floating_point()) return float_text(f->get());
  if (const auto* b = node.as_boolean())
    return b->get() ? QStringLiteral("true") : QStringLiteral("false");
  if (const auto* a = node.as_array()) {
    QStringList parts;
    for (const toml::node& element : *a) parts << node_text(element);
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
  }
  if (const auto* t = node.as_table()) return inline_table_text(*t);
  std::ostringstream out;  // dates and times: toml++'s own form
  out << toml::toml_formatter{node};
  return QString::fromStdString(out.str());
}

inline QVariant variant_of(const toml::node& node) {
  if (const auto* s = node.as_string()) return QString::fromStdString(s->get());
  if (const auto* i = node.as_integer()) return QVariant::fromValue<qlonglong>(i->get());
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* a = node.as_array()) {
    QVariantList list;
    for (const toml::node& element : *a) list << variant_of(element);
    return list;
  }
  if (const auto* t = node.as_table()) {
    QVariantMap map;
    for (auto&& [key, value] : *t)
      map.insert(QString::fromStdString(std::string(key.str())), variant_of(value));
    return map;
  }
  return node_text(node);
}

inline void append_value(toml::array& array, const QVariant& value);

// Puts `value` under `key` (replacing what was there).
inline void put_value(toml::table& table, const std::string& key, const QVariant& value) {
  switch (value.typeId()) {
    case QMetaType::Bool:
      table.insert_or_assign(key, value.toBool());
      return;
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::Long:
    case QMetaType::LongLong:
    case QMetaType::ULong:
    case QMetaType::ULongLong:
      table.insert_or_assign(key, static_cast<int64_t>(value.toLongLong()));
      return;
    case QMetaType::Double:
    case QMetaType::Float:
      table.insert_or_assign(key, value.toDouble());
      return;
    case QMetaType::QVariantList:
    case QMetaType::QStringList: {
      toml::array array;
      for (const QVariant& element : value.toList()) append_value(array, element);
      table.insert_or_assign(key, std::move(array));
      return;
    }
    case QMetaType::QVariantMap: {
      toml::table child;
      const QVariantMap map = value.toMap();
      for (auto it = map.begin(); it != map.end(); ++it)
        put_value(child, it.key().toStdString(), it.value());
      table.insert_or_assign(key, std::move(child));
      return;
    }
    default:
      table.insert_or_assign(key, value.toString().toStdString());
  }
}

inline void append_value(toml::array& array, const QVariant& value) {
  toml::table holder;
  put_value(holder, "v", value);
  array.push_back(std::move(*holder.get("v")));
}

// A header line's comment: what follows its closing bracket(s), with the spaces before it.
inline QString header_comment(const QString& line) {
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (c == QChar('"')) quoted = !quoted;
    if (quoted || c != QChar(']')) continue;
    int rest = i + 1;
    if (rest < line.size() && line[rest] == QChar(']')) ++rest;
    const QString tail = line.mid(rest);
    if (!tail.trimmed().startsWith(QChar('#'))) return {};
    QString kept = tail;
    while (!kept.isEmpty() && kept.back().isSpace()) kept.chop(1);
    return kept;
  }
  return {};
}

// The header text of a table path as the file would spell it ("profile.micro.study").
inline QString header_text(const QStringList& keys) {
  QStringList parts;
  for (const QString& key : keys) parts << key_text(key);
  return parts.join(QChar('.'));
}

inline bool is_section(const toml::node& node) {
  return (node.is_table() && !node.as_table()->is_inline()) || node.is_array_of_tables();
}

}  // namespace lmk::widgets::study_toml
