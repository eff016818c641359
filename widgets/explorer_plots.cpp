#include "widgets/explorer_plots.h"

#include <qcustomplot.h>
#include <QVBoxLayout>

#include <cmath>

#include "widgets/explorer_data.h"
#include "widgets/plot_view.h"

namespace lmk::widgets {

namespace {

QCustomPlot* make_plot(QWidget* parent, const QString& name, const QString& y_label) {
  auto* plot = new QCustomPlot(parent);
  ignore_empty_resizes(plot);
  plot->setObjectName(name);
  plot->setMinimumHeight(120);
  // QCustomPlot's own minimum is its widest text (axis label, title): set one that lets the
  // side panel keep a laptop's width (the labels clip; the plots stay readable).
  plot->setMinimumWidth(160);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString()));
  plot->xAxis->setRange(0, 1);
  plot->yAxis->ticker()->setTickCount(4);
  plot->xAxis->setLabel(QObject::tr("position in the document (fraction of its text)"));
  plot->yAxis->setLabel(y_label);
  return plot;
}

void set_title(QCustomPlot* plot, const QString& text) {
  if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)))
    title->setText(text);
}

}  // namespace

ExplorerPlots::ExplorerPlots(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  similarity_ = make_plot(this, QStringLiteral("explorer_similarity"), tr("cos(query, state)"));
  token_ = make_plot(this, QStringLiteral("explorer_token"), tr("attention"));
  layout->addWidget(similarity_, 1);
  layout->addWidget(token_, 1);
  connect(similarity_, &QCustomPlot::plottableClick, this,
          [this](QCPAbstractPlottable* plottable, int index, QMouseEvent*) {
            if (plottable == similarity_->graph(0)) emit pooling_token_clicked(index);
          });
}

std::vector<std::pair<double, double>> ExplorerPlots::similarity_points(
    const DocumentAttention& d) {
  std::vector<std::pair<double, double>> points;
  for (size_t r = 0; r < d.query_similarity.size() && r < d.pooling_positions.size(); ++r)
    points.emplace_back(position_fraction(d, d.pooling_positions[r]), d.query_similarity[r]);
  return points;
}

std::vector<double> ExplorerPlots::token_attention_points() const {
  std::vector<double> out;
  if (token_->graphCount() == 0) return out;
  for (auto it = token_->graph(0)->data()->constBegin(); it != token_->graph(0)->data()->constEnd();
       ++it)
    out.push_back(it->value);
  return out;
}

void ExplorerPlots::show_document(const DocumentAttention* document,
                                  std::pair<int64_t, int64_t> evidence_bytes,
                                  int64_t selected_position, int64_t layer) {
  similarity_->clearGraphs();
  similarity_->clearItems();
  token_->clearGraphs();
  token_->clearItems();
  if (document == nullptr) {
    set_title(similarity_, tr("No document"));
    set_title(token_, QString());
    replot_when_sized(similarity_);
    replot_when_sized(token_);
    return;
  }
  const DocumentAttention& d = *document;
  const double evidence =
      evidence_bytes.first >= 0 && !d.text.empty()
          ? static_cast<double>(evidence_bytes.first) / static_cast<double>(d.text.size())
          : -1;
  const auto mark_evidence = [evidence](QCustomPlot* plot) {
    if (evidence < 0) return;
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(evidence, 0);
    line->point2->setCoords(evidence, 1);
    line->setPen(QPen(QColor(44, 160, 44), 1.5, Qt::DashLine));
  };
  // The query's similarity to each pooling token's state along the document.
  const auto points = similarity_points(d);
  if (points.empty()) {
    set_title(similarity_, d.query.empty() ? tr("No query: enter one to see which pooling "
                                                "token's state is nearest to it")
                                           : tr("No similarities in this file"));
  } else {
    QVector<double> x, y;
    size_t best = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      x << points[i].first;
      y << points[i].second;
      if (points[i].second > points[best].second) best = i;
    }
    QCPGraph* graph = similarity_->addGraph();
    graph->setData(x, y, true);
    graph->setPen(QPen(series_color(0), 1.2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    graph->setSelectable(QCP::stSingleData);
    QCPGraph* top = similarity_->addGraph();
    top->setData(QVector<double>{points[best].first}, QVector<double>{points[best].second});
    top->setLineStyle(QCPGraph::lsNone);
    top->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(214, 39, 40), 8));
    if (std::isfinite(d.pooled_similarity)) {
      auto* pooled = new QCPItemStraightLine(similarity_);
      pooled->point1->setCoords(0, d.pooled_similarity);
      pooled->point2->setCoords(1, d.pooled_similarity);
      pooled->setPen(QPen(QColor(127, 127, 127), 1, Qt::DashLine));
    }
    mark_evidence(similarity_);
    similarity_->xAxis->setRange(0, 1);
    similarity_->yAxis->rescale();
    similarity_->yAxis->scaleRange(1.15);
    set_title(similarity_, tr("Query vs each pooling token: best #%1 (%2) at %3 % · pooled %4")
                               .arg(best)
                               .arg(points[best].second, 0, 'f', 3)
                               .arg(100 * points[best].first, 0, 'f', 0)
                               .arg(d.pooled_similarity, 0, 'f', 3));
  }
  // Which pooling tokens attend to the selected token.
  if (selected_position < 0) {
    set_title(token_, tr("Click a token: which pooling tokens attend to it"));
  } else {
    const std::vector<float> column = attention_to_position(d, layer, selected_position);
    const QString token = QString::fromStdString(d.tokens[static_cast<size_t>(selected_position)]);
    if (column.empty()) {
      set_title(token_, tr("'%1': each pooling token's attention is kept for layer(s) %2")
                            .arg(token, row_layers_text(d)));
    } else {
      QVector<double> x, y;
      for (size_t r = 0; r < column.size(); ++r) {
        x << position_fraction(d, d.pooling_positions[r]);
        y << column[r];
      }
      QCPGraph* graph = token_->addGraph();
      graph->setData(x, y, true);
      graph->setPen(QPen(series_color(1), 1.2));
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
      auto* here = new QCPItemStraightLine(token_);
      const double at = position_fraction(d, selected_position);
      here->point1->setCoords(at, 0);
      here->point2->setCoords(at, 1);
      here->setPen(QPen(series_color(0), 1.5));
      token_->xAxis->setRange(0, 1);
      token_->yAxis->rescale();
      token_->yAxis->scaleRange(1.15);
      set_title(token_, tr("Attention to '%1' (position %2) from each pooling token, layer %3")
                            .arg(token)
                            .arg(selected_position)
                            .arg(layer));
    }
    mark_evidence(token_);
  }
  replot_when_sized(similarity_);
  replot_when_sized(token_);
}

}  // namespace lmk::widgets
