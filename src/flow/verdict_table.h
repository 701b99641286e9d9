/* Every gate verdict, what it means and where it lands (`nodegate
 * verdicts`), as the document --json prints. */
#ifndef NODEGATE_FLOW_VERDICT_TABLE_H
#define NODEGATE_FLOW_VERDICT_TABLE_H

#include <cjson/cJSON.h>

/* [{verdict, family, admissible, hard, meaning, lands}], in verdict order. */
cJSON *ng_verdict_table_json(void);

#endif
