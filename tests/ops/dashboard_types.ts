// Grafana's own types for a dashboard made of Prometheus-backed timeseries, stat and
// table panels. tests/ops/test_dashboard.py appends
//   export const dashboard: TooltapDashboard = <dashboards/tooltap.json>;
// and runs tsc: an object literal gets excess-property checks, so a misspelled or
// unknown key anywhere (dashboard, panel, options, field config, query, variable) fails.
import type { Dashboard, RowPanel, VariableModel } from "@grafana/schema";
import type * as raw from "@grafana/schema/dist/esm/raw/dashboard/x/Dashboard_types.gen";
import type * as timeseries from "@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen";
import type * as stat from "@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen";
import type * as table from "@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen";
// @grafana/prometheus only exports its root; check.ts lives in .tools/grafana-schema/checks/*/.
import type { Prometheus } from "../../node_modules/@grafana/prometheus/dist/types/dataquery";

/** Dashboard JSON holds enum members as their string values: accept exactly those. */
type Json<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends Array<infer Item>
      ? Array<Json<Item>>
      : T extends object
        ? { [Key in keyof T]: Json<T[Key]> }
        : T;

type FieldConfigSource<Custom> = Omit<raw.FieldConfigSource, "defaults"> & {
  defaults: Omit<raw.FieldConfig, "custom"> & { custom?: Custom };
};

type Typed<Kind extends string, Options, Custom> = Omit<
  raw.Panel,
  "type" | "targets" | "options" | "fieldConfig"
> & {
  type: Kind;
  targets: Prometheus[];
  options: Options;
  fieldConfig: FieldConfigSource<Custom>;
};

type TooltapPanel =
  | Typed<"timeseries", timeseries.Options, timeseries.FieldConfig>
  | Typed<"stat", stat.Options, Record<string, never>>
  | Typed<"table", table.Options, table.FieldConfig>;

export type TooltapDashboard = Json<
  Omit<Dashboard, "panels" | "templating"> & {
    panels: Array<TooltapPanel | RowPanel>;
    templating: { list: VariableModel[] };
  }
>;
