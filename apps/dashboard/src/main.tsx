import { render } from 'preact';
import { App } from './app';
// uPlot's own styles first, so ours can adjust them.
import 'uplot/dist/uPlot.min.css';
import './styles.css';

render(<App />, document.getElementById('app')!);
