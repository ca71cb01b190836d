/* calibrate.h — temperature scaling of the intent logits (Guo et al., 2017, "On Calibration
 * of Modern Neural Networks"): one number T, fitted after training on examples the model did
 * not learn from, so that softmax(logits / T) is as likely as it can be to give each
 * example's intent. T leaves every decision as it was (the ranking of intents does not move)
 * and changes only the confidences, so a fallback threshold of 0.3 means about the same for
 * every model. The fitted T is stored in config.json ("intent_temperature", nlu/model/model.h) and
 * applied by nlu_top_k (nlu/decode.h), which every inference path calls. Pure functions.
 */
#ifndef NLU_TRAIN_CALIBRATE_H
#define NLU_TRAIN_CALIBRATE_H

/* The temperature T in [BERT_MIN_TEMPERATURE, BERT_MAX_TEMPERATURE] (nlu/model/model.h) that
 * minimizes the mean negative log-likelihood of gold (n) under softmax(logits / T), logits
 * (n, n_intents). Examples whose gold is negative (an intent the model does not have) are
 * left out; with none left it returns 1. The loss is convex in 1/T, so a golden-section
 * search over 1/T finds the optimum to about 1e-4. */
float train_fit_temperature(const float *logits, const int *gold, int n, int n_intents);

/* The mean negative log-likelihood of gold under softmax(logits / T), over the examples
 * with gold >= 0 (0 when there are none). */
double train_intent_nll(const float *logits, const int *gold, int n, int n_intents, double t);

#endif
